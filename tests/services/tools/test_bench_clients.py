"""The bench splits a step's tables over client processes and merges what they measured,
against a stack without rate limits."""

from __future__ import annotations

from services.tools.perf.arbiter import SEATS, TablesRun
from services.tools.perf.bench import STACK_ENV
from services.tools.perf.clients import Plan, merged, shares
from services.tools.perf.stats import Samples
from shared.config import Settings

PLAN = Plan({"lobby": "127.0.0.1:1"}, actions_per_seat=5, acting=SEATS, streamed=True,
            pace_seconds=0.0, seconds=10.0)


def test_tables_are_split_evenly_and_player_names_never_repeat() -> None:
    parts = shares(PLAN, 7, 2)
    assert [part.tables for part in parts] == [4, 3]
    names = [part.first_player + index for part in parts for index in range(part.tables * SEATS)]
    assert sorted(names) == list(range(7 * SEATS))


def test_never_more_processes_than_tables() -> None:
    assert [part.tables for part in shares(PLAN, 1, 4)] == [1]


def test_merged_figures_add_up_over_the_parents_time() -> None:
    def run(applied: int, latency: float) -> TablesRun:
        return TablesRun(2, 9.0, applied, 1, Samples("a", [latency] * applied), Samples("o", [latency]),
                         client_cpu=0.5)

    total = merged([run(10, 0.001), run(30, 0.002)], 4.0)
    assert (total.tables, total.applied, total.refused, total.rate) == (4, 40, 2, 10.0)
    assert len(total.answer.values) == 40 and total.client_cpu == 1.0


def test_the_bench_stack_lifts_every_rate_limit() -> None:
    """Hundreds of bot clients log in from one address within a minute: the login limit per
    address (600 a minute by default) stopped `stammtisch bench` at its third step."""
    limits = {name for name in vars(Settings()) if name.endswith(("_per_second", "_per_minute"))}
    assert limits == {"actions_per_second", "logins_per_minute"}, "a new limit: lift it here too"
    assert all(int(STACK_ENV[f"STAMMTISCH_{name.upper()}"]) >= 100_000 for name in limits)

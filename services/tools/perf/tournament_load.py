"""`stammtisch loadtest --tournament`: bot clients play whole tournaments through the full stack.

Every entrant is a bot client of its own: it logs in, registers, watches the
tournament and plays each seat it is given through the real API as fast as it
can. Two tournaments run one after the other against a child stack (`stammtisch
up`, all five services): a Willi Stich series (short games via ``start_round``)
and a Willi knockout. Prints registration time, time per round, actions/s,
action latency, the slowest table, and whether the final standings equal the
standings recomputed from the stored game logs. Asserts nothing.
"""

from __future__ import annotations

import asyncio
import dataclasses
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from services.host.launch import launched_stack
from services.tools.perf.bench import STACK_ENV, cpu_seconds, ms, say
from services.tools.perf.loadtest import TimedClient
from services.tools.perf.stats import Samples
from services.tournament.audit import standings_from_logs
from services.tournament.store import TournamentStore
from shared.api.stammtisch.v1 import tournament_pb2
from shared.config import Settings
from shared.infra.local import local_servers
from shared.infra.runtime import open_runtime
from shared.sdk import tournament as sdk
from shared.sdk.client import Endpoints, StammtischClient


@dataclass(frozen=True)
class Plan:
    """One tournament of the load test."""

    title: str
    game: str
    fmt: str
    rounds: int
    table_size: int
    options: dict[str, int] = field(default_factory=dict)


PLANS = (
    Plan("Willi Stich series", "willi-stich", "series", rounds=3, table_size=4, options={"start_round": 17}),
    Plan("Willi knockout", "willi", "knockout", rounds=0, table_size=4),
)


@dataclass
class Run:
    """What one tournament's clients measured."""

    act: Samples = field(default_factory=lambda: Samples("action -> answer"))
    failures: list[str] = field(default_factory=list)


async def _entrant(client: TimedClient, tournament_id: str, game: str, index: int, run: Run) -> None:
    try:
        await sdk.play_tournament(client, tournament_id, sdk.bot_player(game, index))
    except Exception as exc:  # noqa: BLE001 - a load test reports failures, it does not stop
        run.failures.append(f"entrant {index}: {type(exc).__name__}: {exc}")


def _round_times(history: list[tuple[int, dict[str, Any]]]) -> tuple[list[float], tuple[float, str]]:
    """Seconds per round (seated -> round_finished) and the slowest table (seconds, "round/table")."""
    seated: dict[int, float] = {}
    rounds: list[float] = []
    last_game: dict[tuple[int, int], float] = {}
    for _seq, entry in history:
        if entry["change"] == "seated":
            seated[entry["round"]] = entry["at"]
        elif entry["change"] == "round_finished":
            rounds.append(entry["at"] - seated[entry["round"]])
        elif entry["change"] == "game_finished":
            last_game[(entry["round"], entry["table"])] = entry["at"]
    slowest = max(((at - seated[r], f"round {r} table {t + 1}") for (r, t), at in last_game.items()),
                  default=(0.0, "-"))
    return rounds, slowest


async def run_plan(plan: Plan, players: int, endpoints: Endpoints, settings: Settings,
                   stack_pid: int, seconds: float) -> None:
    """One tournament with ``players`` bot entrants; prints its figures."""
    run = Run()
    clients = [TimedClient(endpoints, run.act) for _ in range(players)]
    organizer = StammtischClient(endpoints)
    try:
        await organizer.login("organizer")
        created = await sdk.create_tournament(
            organizer, plan.title, plan.game, plan.fmt, capacity=players, rounds=plan.rounds,
            games_per_round=1, table_size=plan.table_size, options=plan.options)
        tid = created.tournament_id
        await asyncio.gather(*(client.login(f"load-{index}") for index, client in enumerate(clients)))
        started = time.perf_counter()
        await asyncio.gather(*(sdk.register(client, tid) for client in clients))
        registration = time.perf_counter() - started
        entrants = [asyncio.create_task(_entrant(client, tid, plan.game, index, run))
                    for index, client in enumerate(clients)]
        cpu_before = cpu_seconds(stack_pid)
        started = time.perf_counter()
        await sdk.start(organizer, tid)
        _done, pending = await asyncio.wait(entrants, timeout=seconds)
        elapsed = time.perf_counter() - started
        cpu_after = cpu_seconds(stack_pid)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        if pending:
            run.failures.append(f"{len(pending)} entrants still playing after {seconds:.0f} s")
        final = await sdk.standings(organizer, tid)
        async with open_runtime(settings, name="loadtest-audit") as runtime:
            store = TournamentStore(runtime)
            tournament = await store.get(tid)
            history = await store.history(tid, 0, count=1_000_000)
            from_logs = await standings_from_logs(runtime, tournament)
    finally:
        await asyncio.gather(organizer.close(), *(client.close() for client in clients))
    rounds, slowest = _round_times(history)
    reported = [(line.player_id, line.points_exact) for line in final.standings]
    say(f"{plan.title}: {players} bot entrants, {plan.game}, table size {plan.table_size}, "
        f"status {tournament_pb2.TournamentStatus.Name(final.status)}")
    say(f"  registration of {players} players: {registration:.2f} s "
        f"({players / max(registration, 1e-9):,.0f} registrations/s)")
    tables = [len(r.tables) for r in tournament.rounds]
    say(f"  rounds {len(rounds)} (tables per round {tables}); seconds per round: "
        + ", ".join(f"{value:.1f}" for value in rounds))
    say(f"  whole tournament {elapsed:.1f} s; actions {len(run.act.values)} = "
        f"{len(run.act.values) / max(elapsed, 1e-9):,.0f} actions/s")
    say(f"  action -> answer p50 / p99: {ms(run.act)}")
    say(f"  slowest table: {slowest[1]}, {slowest[0]:.1f} s from seating to its last result")
    if cpu_before is not None and cpu_after is not None:
        say(f"  server process CPU {cpu_after - cpu_before:.1f} s = "
            f"{(cpu_after - cpu_before) / max(elapsed, 1e-9):.0%} of a core")
    say(f"  final standings equal standings recomputed from the game logs: {reported == from_logs} "
        f"({len(reported)} lines)")
    say(f"  failures: {len(run.failures)}")
    for failure in run.failures[:10]:
        say(f"    {failure}")


async def tournaments(players: int, seconds: float, redis_url: str, nats_url: str, data_dir: Path) -> None:
    """Both plans against one child stack."""
    prefix = f"tl{uuid.uuid4().hex[:8]}"
    # Server bots (a knockout's final may need one) play at a brisk pace, like the entrants.
    env = {**STACK_ENV, "REDIS_URL": redis_url, "NATS_URL": nats_url, "STAMMTISCH_KEY_PREFIX": prefix,
           "STAMMTISCH_BOT_DELAY": "0.05"}
    with launched_stack(env, data_dir / "stack") as stack:
        e = stack.endpoints
        endpoints = Endpoints(e["lobby"], e["engine"], e["arbiter"], e["scoring"], e["tournament"])
        settings = dataclasses.replace(Settings(), redis_url=redis_url, nats_url=nats_url, key_prefix=prefix)
        for plan in PLANS:
            await run_plan(plan, players, endpoints, settings, stack.process.pid, seconds)


def main(players: int, seconds: float) -> int:
    """Start servers, run the tournaments, stop everything."""
    with tempfile.TemporaryDirectory(prefix="stammtisch-tournament-load-") as raw, \
            local_servers(Path(raw) / "servers") as (redis_url, nats_url):
        asyncio.run(tournaments(players, seconds, redis_url, nats_url, Path(raw)))
    return 0

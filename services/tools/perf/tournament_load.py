"""`stammtisch loadtest --tournament`: bot clients play whole tournaments through the full stack.

Every entrant is a bot client of its own: it logs in, registers, watches the
tournament (lean: only what a player needs) and plays each seat it is given
through the real API, thinking about a second per decision like a person (or
at full speed, ``--think 0``). The entrants are spread over client processes
(tournament_clients.py), each with a memory cap. Two tournaments run one after
the other against a child stack (`stammtisch up`, all five services): a Willi
Stich series (short games via ``start_round``) and a Willi knockout. Prints
registration time, per round its tables, the wait after the previous round,
its duration, actions/s and action latency, the server's and the clients' CPU,
every process's peak memory, and whether the final standings equal the
standings recomputed from the stored game logs. Asserts nothing.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from services.host.launch import LaunchedStack, launched_stack
from services.tools.perf.bench import STACK_ENV, ms, say, servers_cpu
from services.tools.perf.stats import Samples
from services.tools.perf.tournament_clients import EntrantProcesses, Share, shares
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


def _round_figures(history: list[tuple[int, dict[str, Any]]], tables: list[int]) -> list[RoundFigures]:
    """Per round: tables, seconds from seating to round_finished, and seconds from the previous
    round's last game (for round 1: the start) to this round's seating (how long entrants waited)."""
    seated: dict[int, float] = {}
    finished: dict[int, float] = {}
    last_game: dict[int, float] = {}
    for _seq, entry in history:
        number = int(entry.get("round", 0))
        if entry["change"] == "started":
            last_game[0] = entry["at"]  # round 1 waits from the start
        elif entry["change"] == "seated":
            seated[number] = entry["at"]
        elif entry["change"] == "round_finished":
            finished[number] = entry["at"]
        elif entry["change"] == "game_finished":
            last_game[number] = max(last_game.get(number, 0.0), entry["at"])
    return [RoundFigures(number, tables[number - 1] if number <= len(tables) else 0, at, finished.get(number),
                         at - last_game[number - 1] if number - 1 in last_game else None)
            for number, at in sorted(seated.items())]


@dataclass(frozen=True)
class RoundFigures:
    """One round as the history tells it."""

    number: int
    tables: int
    seated_at: float
    finished_at: float | None
    #: Seconds from the previous round's last game (round 1: the start) to this round's seating.
    gap: float | None


def _samples_between(actions: list[tuple[float, float]], start: float, end: float) -> Samples:
    samples = Samples("action -> answer")
    samples.values = [seconds for at, seconds in actions if start <= at <= end]
    return samples


def _vm_peak(pid: int) -> int | None:
    """A process's peak resident memory in bytes (VmHWM; None once it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def _mib(value: int | None) -> str:
    return "-" if value is None else f"{value / 2**20:,.0f} MiB"


async def run_plan(plan: Plan, options: Options, endpoints: Endpoints, settings: Settings,
                   stack: LaunchedStack) -> None:
    """One tournament with ``options.players`` bot entrants spread over client processes; prints
    its figures."""
    players = options.players
    organizer = StammtischClient(endpoints)
    await organizer.login("organizer")
    tid = (await sdk.create_tournament(
        organizer, plan.title, plan.game, plan.fmt, capacity=players, rounds=plan.rounds,
        games_per_round=1, table_size=plan.table_size, options=plan.options)).tournament_id
    parts = [Share(dataclasses.asdict(endpoints), tid, plan.game, first, count, options.think_seconds,
                   options.memory_cap_bytes, options.seconds)
             for first, count in shares(players, options.processes)]
    entrants = EntrantProcesses(parts)
    try:
        refused = await asyncio.to_thread(entrants.step, "login", options.seconds)
        started = time.perf_counter()
        refused += await asyncio.to_thread(entrants.step, "register", options.seconds)
        registration = time.perf_counter() - started
        server_before = servers_cpu(stack)
        await sdk.start(organizer, tid)
        started = time.perf_counter()
        measured = await asyncio.to_thread(entrants.play, options.seconds)
        elapsed = time.perf_counter() - started
        server_after = servers_cpu(stack)
        final = await sdk.standings(organizer, tid)
    finally:
        entrants.close()
        await organizer.close()
    tables, history, from_logs = await _audit(settings, tid)
    actions = [pair for part in measured for pair in part.actions]
    failures = refused + [failure for part in measured for failure in part.failures]
    act = Samples("action -> answer")
    act.values = [seconds for _at, seconds in actions]
    reported = [(line.player_id, line.points_exact) for line in final.standings]
    pace = f"thinking {options.think_seconds:g} s per decision" if options.think_seconds else "full speed"
    say(f"{plan.title}: {players} bot entrants in {len(parts)} client processes ({pace}), {plan.game}, "
        f"table size {plan.table_size}, status {tournament_pb2.TournamentStatus.Name(final.status)}; "
        f"load average {_load()}")
    say(f"  registration of {players} players: {registration:.2f} s "
        f"({players / max(registration, 1e-9):,.0f} registrations/s)")
    for figures in _round_figures(history, tables):
        end = figures.finished_at if figures.finished_at is not None else time.time()
        in_round = _samples_between(actions, figures.seated_at, end)
        gap = "-" if figures.gap is None else f"{figures.gap:.1f} s"
        took = "unfinished" if figures.finished_at is None else f"{end - figures.seated_at:.1f} s"
        say(f"  round {figures.number}: {figures.tables} tables, seated {gap} after the previous round's "
            f"last game (round 1: the start), took {took}, {len(in_round.values)} actions "
            f"({len(in_round.values) / max(end - figures.seated_at, 1e-9):,.0f}/s), "
            f"action -> answer p50 / p99 {ms(in_round)}")
    say(f"  whole tournament {elapsed:.1f} s; actions {len(act.values)} = "
        f"{len(act.values) / max(elapsed, 1e-9):,.0f} actions/s; action -> answer p50 / p99: {ms(act)}")
    if server_before is not None and server_after is not None:
        cpu = server_after - server_before
        say(f"  server processes' CPU {cpu:.1f} s = {cpu / max(elapsed, 1e-9):.0%} of a core, "
            f"{cpu / max(1, len(act.values)) * 1e3:.2f} ms per action")
    client_cpu = sum(part.client_cpu for part in measured)
    say(f"  client processes' CPU (summed) {client_cpu:.1f} s = "
        f"{client_cpu / max(elapsed, 1e-9):.0%} of a core")
    say("  peak memory: server " + ", ".join(f"pid {pid} {_mib(_vm_peak(pid))}" for pid in stack.pids)
        + "; clients " + ", ".join(_mib(part.peak_rss_bytes) for part in measured))
    say(f"  final standings equal standings recomputed from the game logs: {reported == from_logs} "
        f"({len(reported)} lines)")
    say(f"  failures: {len(failures)}")
    for failure in failures[:10]:
        say(f"    {failure}")


def _load() -> str:
    return " ".join(f"{value:.1f}" for value in os.getloadavg())


async def _audit(settings: Settings, tournament_id: str,
                 ) -> tuple[list[int], list[tuple[int, dict[str, Any]]], list[tuple[str, str]]]:
    """Tables per round, the tournament's stored history and the standings recomputed from the
    stored game logs."""
    async with open_runtime(settings, name="loadtest-audit") as runtime:
        store = TournamentStore(runtime)
        tournament = await store.get(tournament_id)
        history = await store.history(tournament_id, 0, count=1_000_000)
        from_logs = await standings_from_logs(runtime, tournament)
    return [len(round_.tables) for round_ in tournament.rounds], history, from_logs


@dataclass(frozen=True)
class Options:
    """How the load test runs."""

    players: int
    seconds: float
    #: Seconds each entrant thinks before each decision (0: full speed).
    think_seconds: float = 1.0
    #: Client processes the entrants are spread over.
    processes: int = 4
    #: Resident memory a client process may reach before it stops its entrants.
    memory_cap_bytes: int = 2 * 2**30


async def tournaments(options: Options, redis_url: str, nats_url: str, data_dir: Path) -> None:
    """Both plans against one child stack."""
    prefix = f"tl{uuid.uuid4().hex[:8]}"
    # Server bots (a knockout's final may need one) play at a brisk pace, like the entrants.
    env = {**STACK_ENV, "REDIS_URL": redis_url, "NATS_URL": nats_url, "STAMMTISCH_KEY_PREFIX": prefix,
           "STAMMTISCH_BOT_DELAY": "0.05"}
    with launched_stack(env, data_dir / "stack") as stack:
        endpoints = Endpoints.of(stack.endpoints)
        settings = dataclasses.replace(Settings(), redis_url=redis_url, nats_url=nats_url, key_prefix=prefix)
        for plan in PLANS:
            await run_plan(plan, options, endpoints, settings, stack)


def main(players: int, seconds: float, think_seconds: float = 1.0, processes: int = 0) -> int:
    """Start servers, run the tournaments, stop everything. ``processes`` 0: one client process
    per 500 entrants, at least two."""
    options = Options(players, seconds, think_seconds, processes or max(2, -(-players // 500)))
    with tempfile.TemporaryDirectory(prefix="stammtisch-tournament-load-") as raw, \
            local_servers(Path(raw) / "servers") as (redis_url, nats_url):
        asyncio.run(tournaments(options, redis_url, nats_url, Path(raw)))
    return 0

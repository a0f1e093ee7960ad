"""`stammtisch loadtest` (`make loadtest`): a tournament of many tables through the full stack.

Every player is a bot client of its own: it logs in, queues in quick match,
and plays its seat through the real API as fast as it can, over a Play stream
(or, with ``--unary``, by Act calls next to a Subscribe stream). The servers run as
a child process against a Redis and NATS this run starts itself. Bounded in
tables and time; prints what it measured and asserts nothing.
"""

from __future__ import annotations

import asyncio
import os
import random
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from services.host.launch import LaunchedStack, launched_stack
from services.tools.perf.bench import STACK_ENV, cpu_seconds, ms, say, servers_cpu
from services.tools.perf.stats import Samples
from shared.api.stammtisch.v1 import scoring_pb2
from shared.games.catalog import CATALOGUE
from shared.games.registry import bot_levels
from shared.infra.local import local_servers
from shared.sdk.botplayer import play_seat
from shared.sdk.client import Endpoints, PlayStream, StammtischClient, Update

#: Seats per table in the tournament, by game: four, or fewer where a game seats fewer.
SEATS = {name: min(4, game.max_seats) for name, game in CATALOGUE.items()}


class TimedPlayStream(PlayStream):
    """A Play stream that records how long each of its actions took to be answered."""

    async def act(self, action: Mapping[str, Any], action_id: str | None = None,
                  round_no: int | None = None) -> int:
        assert isinstance(self.client, TimedClient)
        started = time.perf_counter()
        try:
            return await super().act(action, action_id, round_no)
        finally:
            self.client.samples.add(time.perf_counter() - started)


class TimedClient(StammtischClient):
    """A client that records how long each of its actions took to be answered."""

    play_stream_class = TimedPlayStream

    def __init__(self, endpoints: Endpoints, samples: Samples) -> None:
        super().__init__(endpoints)
        self.samples = samples

    async def act(self, table_id: str, action: Mapping[str, Any], action_id: str | None = None,
                  attempts: int = 5, round_no: int | None = None) -> Update:
        started = time.perf_counter()
        try:
            return await super().act(table_id, action, action_id, attempts, round_no)
        finally:
            self.samples.add(time.perf_counter() - started)


class Tournament:
    """The players of one load test and what they saw."""

    def __init__(self, endpoints: Endpoints, game: str, tables: int, streamed: bool = True) -> None:
        self.endpoints = endpoints
        self.streamed = streamed
        self.game = game
        self.players = tables * SEATS[game]
        self.act = Samples("action -> answer")
        self.matched = Samples("quick match: queue -> seated")
        self.games = Samples("whole game (first view -> over)")
        self.failures: list[str] = []
        self.tables: set[str] = set()

    async def player(self, index: int) -> None:
        """One bot: log in, quick match, play to the end."""
        client = TimedClient(self.endpoints, self.act)
        try:
            await client.login(f"load-{index}")
            started = time.perf_counter()
            table, _seat = await client.quick_match(self.game, SEATS[self.game])
            self.matched.add(time.perf_counter() - started)
            self.tables.add(table.table_id)
            started = time.perf_counter()
            bot = bot_levels(self.game)["heuristic"]()
            await play_seat(client, table.table_id, bot, random.Random(index), streamed=self.streamed)
            self.games.add(time.perf_counter() - started)
        except Exception as exc:  # noqa: BLE001 - a load test reports failures, it does not stop
            self.failures.append(f"player {index}: {type(exc).__name__}: {exc}")
        finally:
            await client.close()

    async def run(self, seconds: float) -> float:
        """All players at once, bounded in time; returns the elapsed seconds."""
        started = time.perf_counter()
        tasks = [asyncio.create_task(self.player(i)) for i in range(self.players)]
        _done, pending = await asyncio.wait(tasks, timeout=seconds)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        if pending:
            self.failures.append(f"{len(pending)} players still playing after {seconds:.0f} s")
        return time.perf_counter() - started


async def recorded_games(endpoints: Endpoints, game: str, wait: float = 10.0) -> int:
    """Games the scoring service has on its leaderboard (wins counted once per game)."""
    async with StammtischClient(endpoints) as client:
        await client.login("load-observer")
        deadline = time.monotonic() + wait
        total = 0
        while time.monotonic() < deadline:
            board = await client.scoring.GetLeaderboard(scoring_pb2.GetLeaderboardRequest(
                game=game, limit=100), metadata=client.auth)
            total = sum(entry.games for entry in board.entries)
            await asyncio.sleep(0.5)
        return total


@dataclass
class Run:
    """What one tournament measured."""

    load: Tournament
    elapsed: float
    server_cpu: float | None
    door_cpu: float | None
    client_cpu: float

    @property
    def actions(self) -> int:
        """Actions answered."""
        return len(self.load.act.values)

    def per_action_ms(self, seconds: float | None) -> str:
        """CPU seconds as milliseconds per answered action ("-" when not measured)."""
        return "-" if seconds is None else f"{seconds / max(1, self.actions) * 1e3:.3f}"


def door_cpu(stack: LaunchedStack) -> float | None:
    """CPU time of the door's nginx processes so far (None without /proc or without a door)."""
    seconds = [cpu_seconds(pid) for pid in stack.door_pids]
    return None if not seconds or None in seconds else sum(s for s in seconds if s is not None)


async def measured(stack: LaunchedStack, endpoints: Endpoints, game: str, tables: int, seconds: float,
                   streamed: bool) -> Run:
    """One tournament through ``endpoints`` with the CPU the servers, the door and the clients spent."""
    load = Tournament(endpoints, game, tables, streamed)
    server_before, door_before, client_before = servers_cpu(stack), door_cpu(stack), time.process_time()
    elapsed = await load.run(seconds)
    server_after, door_after = servers_cpu(stack), door_cpu(stack)
    return Run(load, elapsed, _spent(server_before, server_after), _spent(door_before, door_after),
               time.process_time() - client_before)


def _spent(before: float | None, after: float | None) -> float | None:
    return None if before is None or after is None else after - before


async def tournament(game: str, tables: int, seconds: float, redis_url: str, nats_url: str,
                     data_dir: Path, workers: int = 1, streamed: bool = True, door: bool = False) -> None:
    """Run one tournament against a child stack and print its figures; with ``door`` a second one
    through the door (services/host/door.py) and both side by side."""
    env = {**STACK_ENV, "REDIS_URL": redis_url, "NATS_URL": nats_url}
    if os.environ.get("STAMMTISCH_METRICS_PORT"):  # a fixed port, for a Prometheus to watch the run
        env["STAMMTISCH_METRICS_PORT"] = os.environ["STAMMTISCH_METRICS_PORT"]
    with launched_stack(env, data_dir / "stack", workers=workers) as stack:
        endpoints = Endpoints.of(stack.endpoints)
        say(f"Tournament: {tables} tables of {game}, {tables * SEATS[game]} bot clients "
            f"({'Play streams' if streamed else 'unary Act + Subscribe'}), {workers} worker(s), "
            f"quick match then whole games (cap {seconds:.0f} s); metrics http://{stack.endpoints['metrics']}")
        run = await measured(stack, endpoints, game, tables, seconds, streamed)
        seat_games = await recorded_games(endpoints, game, wait=3.0)
        print_run(run, game, seat_games)
        if door:
            say(f"The same through the door {stack.door} (TLS, nginx pids {stack.door_pids})")
            through = await measured(stack, Endpoints.door(stack.door, stack.ca), game, tables, seconds,
                                     streamed)
            print_run(through, game, None)
            print_comparison(run, through)


def print_run(run: Run, game: str, seat_games: int | None) -> None:
    """The figures of one tournament."""
    load = run.load
    finished = len(load.games.values) // SEATS[game]
    say(f"  tables formed {len(load.tables)}, games finished {finished}, in {run.elapsed:.1f} s")
    say(f"  actions answered {run.actions} = {run.actions / run.elapsed:,.0f} actions/s")
    for samples in (load.act, load.matched, load.games):
        say(samples.line())
    if run.server_cpu is not None:
        say(f"  server processes' CPU (summed) {run.server_cpu:.1f} s = {run.server_cpu / run.elapsed:.0%} "
            f"of a core, {run.per_action_ms(run.server_cpu)} ms per action")
    say(f"  bot clients' CPU (this process) {run.client_cpu:.1f} s, {run.per_action_ms(run.client_cpu)} ms "
        "per action")
    if seat_games is not None:
        say(f"  scoring recorded {seat_games} player-games (expected {finished * SEATS[game]})")
    say(f"  action -> answer p50 / p99: {ms(load.act)}")
    say(f"  failures: {len(load.failures)}")
    for failure in load.failures[:10]:
        say(f"    {failure}")


def print_comparison(direct: Run, door: Run) -> None:
    """Direct connections and the door side by side: what the door adds."""
    rows = [("actions/s", f"{direct.actions / direct.elapsed:,.0f}", f"{door.actions / door.elapsed:,.0f}"),
            ("action -> answer p50 ms", f"{direct.load.act.quantile(0.5) * 1e3:.2f}",
             f"{door.load.act.quantile(0.5) * 1e3:.2f}"),
            ("action -> answer p99 ms", f"{direct.load.act.quantile(0.99) * 1e3:.2f}",
             f"{door.load.act.quantile(0.99) * 1e3:.2f}"),
            ("servers' CPU ms per action", direct.per_action_ms(direct.server_cpu),
             door.per_action_ms(door.server_cpu)),
            ("door (nginx) CPU ms per action", direct.per_action_ms(direct.door_cpu),
             door.per_action_ms(door.door_cpu)),
            ("clients' CPU ms per action", direct.per_action_ms(direct.client_cpu),
             door.per_action_ms(door.client_cpu))]
    say(f"  {'':<32} {'direct':>10} {'door':>10}")
    for name, left, right in rows:
        say(f"  {name:<32} {left:>10} {right:>10}")
    added = [(door.load.act.quantile(q) - direct.load.act.quantile(q)) * 1e3 for q in (0.5, 0.99)]
    say(f"  the door adds {added[0]:+.2f} ms at p50 and {added[1]:+.2f} ms at p99 per action")


#: The game the load test plays when none is named: four seats of tricks, the common case.
DEFAULT_GAME = "willi"


def main(game: str | None, tables: int, seconds: float, workers: int = 1, streamed: bool = True,
         door: bool = False) -> int:
    """Start servers, run the tournament (of ``game``, else :data:`DEFAULT_GAME`; with ``door``
    again through the door), stop everything."""
    game = game or DEFAULT_GAME
    with tempfile.TemporaryDirectory(prefix="stammtisch-load-") as raw, \
            local_servers(Path(raw) / "servers") as (redis_url, nats_url):
        asyncio.run(tournament(game, tables, seconds, redis_url, nats_url, Path(raw), workers, streamed,
                               door))
    return 0

"""Wie Waldi tables of heuristic bot clients playing as fast as they can, over the real API.

Each seat is one client with its own token: it follows its update stream and
acts whenever its newest view offers something, one action at a time, sending
the round it saw: over one Play stream (``streamed``, the default of the
bench), or by unary Act calls next to a Subscribe stream. Every action and
every arrival is timed, so a run yields the actions per second, action ->
answer and action -> the other players' event. The integration tests use
the same clients and check what they recorded.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import grpc

from services.tools.perf.stats import Samples
from shared.games.waldi.bots import HeuristicBot
from shared.sdk.client import RETRYABLE, Endpoints, PlayStream, RefusedAction, StammtischClient, Update

GAME = "wie-waldi"
SEATS = 4
#: With nothing new for this long, a seat asks for its view (heals a broken stream).
IDLE_SECONDS = 2.0


@dataclass
class Sent:
    """One Act call as its client saw it."""

    seat: int
    action: dict[str, Any]
    round_no: int
    started: float
    answered: float
    #: The commit that applied it; None when refused.
    seq: int | None
    #: The rules code of a refusal; "" when applied.
    code: str = ""


@dataclass
class BotSeat:
    """One seat's client: a heuristic bot acting on its newest view, timing everything."""

    client: StammtischClient
    table_id: str
    seat: int
    rng: random.Random
    #: Stop acting after this many calls (None: until the game is over).
    max_actions: int | None = None
    #: Resubscribe after this many updates, from the last seq seen, through the next of
    #: ``resume_via`` (a drop and reconnect, possibly to another replica).
    resume_every: int | None = None
    resume_via: Sequence[StammtischClient] = ()
    #: Act and follow over one Play stream (else unary Act plus Subscribe).
    streamed: bool = False
    #: Offered load: at most one action per this many seconds (0: as fast as it can).
    pace_seconds: float = 0.0
    sent: list[Sent] = field(default_factory=list)
    #: Every seq the stream delivered, in order (a reconnect must add no gap, no duplicate).
    seen: list[int] = field(default_factory=list)
    #: seq -> when the stream delivered it (perf_counter).
    arrivals: dict[int, float] = field(default_factory=dict)
    latest: Update | None = None
    reconnects: int = 0

    def __post_init__(self) -> None:
        self.bot = HeuristicBot()
        self._changed = asyncio.Event()
        self._stream: PlayStream | None = None
        self._next_slot = 0.0

    # -- what the seat knows -------------------------------------------------------------

    def _take(self, update: Update) -> None:
        """Keep the newest update, whether it came from the stream or a reply."""
        if self.latest is None or update.seq > self.latest.seq:
            self.latest = update

    def _done(self, until: float) -> bool:
        over = self.latest is not None and bool(self.latest.view.get("over"))
        capped = self.max_actions is not None and len(self.sent) >= self.max_actions
        return over or capped or time.perf_counter() >= until

    def _arrived(self, update: Update) -> None:
        self.arrivals.setdefault(update.seq, time.perf_counter())
        self.seen.append(update.seq)
        self._take(update)
        self._changed.set()

    async def follow(self) -> None:
        """The update stream, forever; resumes from the last seq as configured."""
        if self.streamed:
            async with self.client.play(self.table_id, self.seen[-1] if self.seen else 0) as stream:
                self._stream = stream
                while True:
                    self._arrived(await stream.next_update())
        sources = [self.client, *self.resume_via]
        while True:
            source = sources[self.reconnects % len(sources)]
            after = self.seen[-1] if self.seen else 0
            count = 0
            updates = source.updates(self.table_id, after)
            try:
                async for update in updates:
                    self._arrived(update)
                    count += 1
                    if self.resume_every and count >= self.resume_every:
                        break
            finally:
                await updates.aclose()  # type: ignore[attr-defined]  # an async generator
            self.reconnects += 1

    # -- acting ----------------------------------------------------------------------------

    async def act_until_done(self, until: float) -> None:
        """Act on every new view until the game is over, the cap is reached or time is up."""
        refused_at = -1
        while not self._done(until):
            current = self.latest
            waiting = self.streamed and self._stream is None
            if current is None or not current.view.get("legal") or current.seq <= refused_at or waiting:
                self._changed.clear()
                try:
                    await asyncio.wait_for(self._changed.wait(), IDLE_SECONDS)
                except TimeoutError:
                    try:
                        self._take(await self.client.view(self.table_id))
                    except grpc.aio.AioRpcError as err:
                        if err.code() not in RETRYABLE:  # an overloaded server: look again later
                            raise
                    refused_at = -1
                continue
            if not await self._act(current):
                refused_at = current.seq

    async def _act(self, current: Update) -> bool:
        """One call; True when it was applied."""
        if self.pace_seconds:
            now = time.perf_counter()
            if not self._next_slot:  # seats started together must not act in lockstep bursts
                self._next_slot = now + self.rng.uniform(0.0, self.pace_seconds)
            await asyncio.sleep(max(0.0, self._next_slot - now))
            self._next_slot = max(now, self._next_slot) + self.pace_seconds
        action = self.bot.choose(current.view, self.rng)
        round_no = int(current.view["round"])
        started = time.perf_counter()
        try:
            if self._stream is not None:
                seq = await self._stream.act(action, round_no=round_no)
            else:
                update = await self.client.act(self.table_id, action, round_no=round_no)
                self._take(update)
                seq = update.seq
        except RefusedAction as refusal:
            self.sent.append(Sent(self.seat, action, round_no, started, time.perf_counter(), None,
                                  refusal.code))
            return False
        self.sent.append(Sent(self.seat, action, round_no, started, time.perf_counter(), seq))
        if self._stream is not None:
            await self.caught_up(seq)  # decide on the view with this action in it, as a reply gives
        return True

    async def opened(self) -> None:
        """Wait until the stream is open and has delivered a commit."""
        while self.latest is None or (self.streamed and self._stream is None):
            self._changed.clear()
            await self._changed.wait()

    async def caught_up(self, seq: int, timeout: float = 5.0) -> None:
        """Wait until the stream has delivered ``seq`` (bounded)."""
        deadline = time.perf_counter() + timeout
        while seq not in self.arrivals and time.perf_counter() < deadline:
            self._changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), deadline - time.perf_counter())


@contextlib.asynccontextmanager
async def following(seats: Sequence[BotSeat], timeout: float = 60.0) -> AsyncIterator[None]:
    """Every seat's stream open and past the table's first commit, for the block: players
    sit at the table, watching, before anyone plays (so a step's figures are its actions',
    not the opening of its streams)."""
    followers = [asyncio.create_task(seat.follow()) for seat in seats]
    try:
        await asyncio.wait_for(asyncio.gather(*(seat.opened() for seat in seats)), timeout)
        yield
    finally:
        for task in followers:
            task.cancel()
        await asyncio.gather(*followers, return_exceptions=True)


async def act_table(seats: Sequence[BotSeat], seconds: float = 600.0) -> None:
    """Every seat acts (their streams open); then each stream catches up with the newest commit."""
    await asyncio.gather(*(seat.act_until_done(time.perf_counter() + seconds) for seat in seats))
    newest = max((seat.latest.seq for seat in seats if seat.latest is not None), default=0)
    await asyncio.gather(*(seat.caught_up(newest) for seat in seats))


async def play_table(seats: Sequence[BotSeat], seconds: float = 600.0) -> None:
    """Every seat follows and acts; then each stream catches up with the newest commit."""
    async with following(seats):
        await act_table(seats, seconds)


async def seat_players(clients: Sequence[StammtischClient], round_seconds: int | None = None) -> str:
    """Through the lobby: the first client opens a table, everybody sits down and is ready."""
    limit = {} if round_seconds is None else {"round_seconds": round_seconds}
    table = await clients[0].create_table(GAME, len(clients), join=True, options=limit)
    for client in clients[1:]:
        await client.join(table.table_id)
    for client in clients:
        await client.ready(table.table_id)
    return table.table_id


# -- the benchmark step ---------------------------------------------------------------------------


@dataclass
class TablesRun:
    """What one step (some tables at once) measured."""

    tables: int
    seconds: float
    applied: int
    refused: int
    answer: Samples
    others: Samples
    #: CPU seconds the clients spent playing (all client processes together).
    client_cpu: float = 0.0
    #: CPU seconds every server process spent on the step together (None: not measured).
    server_cpu: float | None = None

    @property
    def rate(self) -> float:
        """Applied actions per second of the step."""
        return self.applied / self.seconds if self.seconds else 0.0

    def lines(self) -> list[str]:
        """The step's figures, ready to print."""
        return [f"  {self.applied} actions applied, {self.refused} refused (lost races), "
                f"{self.seconds:.1f} s  ->  {self.rate:,.0f} actions/s",
                self.answer.line(), self.others.line()]


def measure(seats_by_table: Sequence[Sequence[BotSeat]], seconds: float) -> TablesRun:
    """Latencies of a finished step: every call, and every other seat's arrival of each commit."""
    answer = Samples("action -> answer")
    others = Samples("action -> other players' event (stream)")
    applied = refused = 0
    for seats in seats_by_table:
        for seat in seats:
            for sent in seat.sent:
                answer.add(sent.answered - sent.started)
                if sent.seq is None:
                    refused += 1
                    continue
                applied += 1
                for other in seats:
                    arrived = other.arrivals.get(sent.seq)
                    if other is not seat and arrived is not None:
                        others.add(arrived - sent.started)
    return TablesRun(len(seats_by_table), seconds, applied, refused, answer, others)


@contextlib.asynccontextmanager
async def seated_tables(endpoints: Endpoints, tables: int, actions_per_seat: int,
                        acting: int = SEATS, streamed: bool = True,
                        pace_seconds: float = 0.0,
                        first_player: int = 0) -> AsyncIterator[list[list[BotSeat]]]:
    """``tables`` lobby tables of 4 logged-in bot clients each, ready to play.

    The first ``acting`` seats of a table act (up to ``actions_per_seat`` actions,
    at most one per ``pace_seconds``); the others only follow their streams.
    Players are named bench<first_player>, bench<first_player + 1>...
    """
    clients = [StammtischClient(endpoints) for _ in range(tables * SEATS)]
    try:
        await asyncio.gather(*(client.login(f"bench{first_player + index}")
                               for index, client in enumerate(clients)))
        groups = [clients[index:index + SEATS] for index in range(0, len(clients), SEATS)]
        table_ids = await asyncio.gather(*(seat_players(group) for group in groups))
        yield [[BotSeat(client, table_id, seat, random.Random(f"{table_id}:{seat}"),
                        max_actions=actions_per_seat if seat < acting else 0, streamed=streamed,
                        pace_seconds=pace_seconds)
                for seat, client in enumerate(group)]
               for group, table_id in zip(groups, table_ids, strict=True)]
    finally:
        await asyncio.gather(*(client.close() for client in clients))


async def act_tables(seats_by_table: Sequence[Sequence[BotSeat]], seconds: float) -> TablesRun:
    """Every table at once, each seat until its cap or ``seconds`` (their streams open, see
    :func:`following`); the step's figures."""
    started = time.perf_counter()
    await asyncio.gather(*(act_table(seats, seconds) for seats in seats_by_table))
    return measure(seats_by_table, time.perf_counter() - started)

"""Bot clients that play whole tables through the SDK while processes die under them.

A client keeps going as an app would: a call that fails for a passing reason
(UNAVAILABLE, a deadline) is sent again, an action always with the SAME action
id, so a retry is answered from the first commit instead of being applied
again. Everything the clients were told goes into the :class:`Ledger`, which
the checks later hold against Redis and scoring.

INTERNAL and UNKNOWN are recorded as failures; the client then retries too, so
that one bad answer does not hide whatever else the run would find.
"""

from __future__ import annotations

import asyncio
import functools
import random
import time
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

import grpc

from shared.api.stammtisch.v1 import lobby_pb2
from shared.games.catalog import CATALOGUE
from shared.games.registry import bot_levels
from shared.sdk.client import Endpoints, RefusedAction, StammtischClient, Update

T = TypeVar("T")

#: Shorter still for a chaos run than a game's own short options: Wie Waldi's rounds end by
#: their time limit within seconds, so the kills meet round ends too.
CHAOS_OPTIONS: dict[str, dict[str, int]] = {"wie-waldi": {"round_seconds": 6}}
#: How each game of the catalogue is played in a chaos run: three seats where it may have
#: them (else its nearest), and its short-game options.
TABLES: dict[str, tuple[int, dict[str, Any]]] = {
    name: (min(max(3, game.min_seats), game.max_seats),
           {**game.short_options, **CHAOS_OPTIONS.get(name, {})})
    for name, game in CATALOGUE.items()}
#: Statuses a client retries: the call may or may not have happened, and retrying is safe.
PASSING = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED})
#: Statuses no client may ever see.
FORBIDDEN = frozenset({grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN})
#: One attempt of any call may take this long.
CALL_SECONDS = 15.0
#: A client gives up on one call (and reports it) after this long.
PATIENCE_SECONDS = 120.0
#: Attempts the SDK makes of one Act before handing the failure back here.
SDK_ATTEMPTS = 8


@dataclass(frozen=True)
class Acknowledged:
    """An action a client got an OK for: where the server says it was committed."""

    table_id: str
    player_id: str
    seat: int
    action_id: str
    seq: int
    action: dict[str, Any]


@dataclass
class TableRun:
    """One table of the run, as its clients saw it."""

    table_id: str
    game: str
    players: list[str]
    finished: bool = False
    final_seq: int = 0


@dataclass
class Ledger:
    """Everything the clients were told, for the checks at the end."""

    acknowledged: list[Acknowledged] = field(default_factory=list)
    #: (table, player, action id) of actions whose answer never came (given up).
    abandoned: list[tuple[str, str, str]] = field(default_factory=list)
    tables: dict[str, TableRun] = field(default_factory=dict)
    #: Status code name -> how often a client saw it (after the SDK's own retries).
    statuses: Counter[str] = field(default_factory=Counter)
    #: Calls that failed with a forbidden status: "call: CODE: details" -> how often.
    forbidden_calls: Counter[str] = field(default_factory=Counter)
    #: Actions the rules refused (a lost race in Wie Waldi, mostly): answered, not committed.
    refused: int = 0
    stream_faults: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    #: Monotonic times at which some table got a commit no client had seen before.
    progress: list[float] = field(default_factory=list)
    _newest: dict[str, int] = field(default_factory=dict)

    def saw(self, table_id: str, seq: int) -> None:
        """A client learnt of commit ``seq``; a new one counts as progress of the run."""
        if seq > self._newest.get(table_id, 0):
            self._newest[table_id] = seq
            self.progress.append(time.monotonic())

    def failed_call(self, what: str, err: grpc.aio.AioRpcError) -> None:
        """Count a failed call by status, and forbidden ones by call and message."""
        self.statuses[err.code().name] += 1
        if err.code() in FORBIDDEN:
            self.forbidden_calls[f"{what}: {err.code().name}: {err.details()}"] += 1


async def persist(ledger: Ledger, what: str, call: Callable[[], Awaitable[T]],
                  patience: float = PATIENCE_SECONDS) -> T:
    """Run ``call`` until it answers, retrying passing and forbidden failures (counted)."""
    deadline = time.monotonic() + patience
    pause = 0.1
    while True:
        try:
            return await asyncio.wait_for(call(), CALL_SECONDS)
        except TimeoutError:
            ledger.statuses["CLIENT_TIMEOUT"] += 1
        except grpc.aio.AioRpcError as err:
            ledger.failed_call(what, err)
            if err.code() not in PASSING | FORBIDDEN:
                raise
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: no answer within {patience:.0f} s")
        await asyncio.sleep(pause)
        pause = min(1.0, pause * 2)


class SeatBot:
    """One seat's client: acts when the rules let it, follows the table's stream to the end."""

    def __init__(self, ledger: Ledger, client: StammtischClient, table_id: str, seat: int, game: str,
                 rng: random.Random, think: float) -> None:
        self.ledger = ledger
        self.client = client
        self.table_id = table_id
        self.seat = seat
        self.bot = bot_levels(game)["heuristic"]()
        self.rng = rng
        self.think = think
        self.latest: Update | None = None
        self._news = asyncio.Event()
        self._stream_ended = asyncio.Event()

    def _learn(self, update: Update) -> None:
        self.ledger.saw(self.table_id, update.seq)
        if self.latest is None or update.seq > self.latest.seq:
            self.latest = update
            self._news.set()

    async def play(self, start_timeout: float) -> Update:
        """Play the seat until the game is over; returns the last update."""
        current = await self._first_view(start_timeout)
        self._learn(current)
        follower = asyncio.create_task(self._follow(current.seq))
        try:
            refused_at = -1
            while not current.view.get("over"):
                if current.view.get("legal") and current.seq != refused_at:
                    await asyncio.sleep(self.think)
                    try:
                        current = await self._act(current)
                    except RefusedAction:
                        self.ledger.refused += 1
                        refused_at = current.seq
                        current = await persist(self.ledger, "view", lambda: self.client.view(self.table_id))
                    self._learn(current)
                    continue
                current = await self._newer_than(current.seq)
            try:
                await asyncio.wait_for(self._stream_ended.wait(), PATIENCE_SECONDS)
            except TimeoutError:
                self.ledger.stream_faults.append(
                    f"{self.table_id} seat {self.seat}: the stream did not reach the end of the game")
        finally:
            follower.cancel()
            await asyncio.gather(follower, return_exceptions=True)
        return current

    async def _first_view(self, timeout: float) -> Update:
        """The first view once the lobby has started the game (NOT_FOUND until then)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                return await persist(self.ledger, "view", lambda: self.client.view(self.table_id))
            except grpc.aio.AioRpcError as err:
                if err.code() != grpc.StatusCode.NOT_FOUND or time.monotonic() > deadline:
                    raise
            await asyncio.sleep(0.3)

    async def _newer_than(self, seq: int) -> Update:
        """The next news from the stream; the client asks for the view when the stream is quiet."""
        while self.latest is None or self.latest.seq <= seq:
            self._news.clear()
            try:
                await asyncio.wait_for(self._news.wait(), 5.0)
            except TimeoutError:
                self._learn(await persist(self.ledger, "view", lambda: self.client.view(self.table_id)))
        return self.latest

    async def _act(self, current: Update) -> Update:
        """One action, sent until answered, always with the same action id."""
        action = self.bot.choose(current.view, self.rng)
        action_id = uuid.uuid4().hex
        player = self.client.player_id
        try:
            update = await persist(self.ledger, "act", lambda: self.client.act(
                self.table_id, action, action_id, attempts=SDK_ATTEMPTS, round_no=current.view.get("round")))
        except (grpc.aio.AioRpcError, TimeoutError, asyncio.CancelledError):
            self.ledger.abandoned.append((self.table_id, player, action_id))
            raise
        self.ledger.acknowledged.append(
            Acknowledged(self.table_id, player, self.seat, action_id, update.seq, dict(action)))
        return update

    async def _follow(self, after_seq: int) -> None:
        """Read the table's stream; each seq must be the previous one plus one, across reconnects."""
        last = after_seq
        while True:
            try:
                async for update in self.client.updates(self.table_id, last):
                    if update.seq != last + 1:
                        kind = "duplicate" if update.seq <= last else "gap"
                        self.ledger.stream_faults.append(
                            f"{self.table_id} seat {self.seat}: {kind}: seq {update.seq} after {last}")
                    last = max(last, update.seq)
                    self._learn(update)
                    if update.view.get("over"):
                        self._stream_ended.set()
                        return
            except grpc.aio.AioRpcError as err:
                self.ledger.failed_call("subscribe", err)
                if err.code() not in PASSING | FORBIDDEN:
                    self.ledger.failures.append(f"{self.table_id} seat {self.seat}: stream: "
                                                f"{err.code().name}: {err.details()}")
                    return
            await asyncio.sleep(0.2)


class TableDriver:
    """Sets up one table through the lobby (login, create, join, ready) and plays it to the end."""

    def __init__(self, ledger: Ledger, endpoints: Endpoints, game: str, number: int, think: float) -> None:
        self.ledger = ledger
        self.game = game
        self.number = number
        self.think = think
        seats, self.options = TABLES[game]
        self.clients = [StammtischClient(endpoints) for _ in range(seats)]

    async def run(self, start_timeout: float = 60.0) -> None:
        """The whole table; failures are written to the ledger, never raised."""
        try:
            table_id = await self._seat_everyone()
            await self._play(table_id, start_timeout)
        except Exception as exc:  # noqa: BLE001 - a chaos run reports what went wrong and goes on
            self.ledger.failures.append(f"table {self.number} ({self.game}): {type(exc).__name__}: {exc}")
        finally:
            await asyncio.gather(*(client.close() for client in self.clients))

    async def _seat_everyone(self) -> str:
        for index, client in enumerate(self.clients):
            name = f"chaos{self.number}-{index}"
            await persist(self.ledger, "login", functools.partial(client.login, name))
        host = self.clients[0]
        table = await persist(self.ledger, "create table", functools.partial(
            host.create_table, self.game, len(self.clients), join=True, options=self.options,
            turn_seconds=0))
        table_id = table.table_id
        self.ledger.tables[table_id] = TableRun(table_id, self.game, [c.player_id for c in self.clients])
        for seat, client in enumerate(self.clients[1:], 1):
            await self._ensure(client, table_id, functools.partial(client.join, table_id, seat=seat),
                               functools.partial(_seated, client.player_id, seat))
        for client in self.clients:
            await self._ensure(client, table_id, functools.partial(client.ready, table_id),
                               functools.partial(_ready, client.player_id))
        return table_id

    async def _ensure(self, client: StammtischClient, table_id: str, call: Callable[[], Awaitable[Any]],
                      done: Callable[[lobby_pb2.Table], bool]) -> None:
        """A lobby step that may have happened already (its answer lost): done is done."""
        try:
            await persist(self.ledger, "lobby", call)
        except grpc.aio.AioRpcError as err:
            if err.code() != grpc.StatusCode.FAILED_PRECONDITION:
                raise
            if not done(await persist(self.ledger, "lobby", functools.partial(client.get_table, table_id))):
                raise

    async def _play(self, table_id: str, start_timeout: float) -> None:
        run = self.ledger.tables[table_id]
        bots = [SeatBot(self.ledger, client, table_id, seat, self.game,
                        random.Random(f"{self.number}:{seat}"), self.think)
                for seat, client in enumerate(self.clients)]
        outcomes = await asyncio.gather(*(bot.play(start_timeout) for bot in bots), return_exceptions=True)
        finals = [outcome for outcome in outcomes if isinstance(outcome, Update)]
        for seat, outcome in enumerate(outcomes):
            if isinstance(outcome, BaseException):
                self.ledger.failures.append(f"{table_id} seat {seat} ({self.game}): "
                                            f"{type(outcome).__name__}: {outcome}")
        run.final_seq = max((final.seq for final in finals), default=0)
        run.finished = len(finals) == len(bots) and all(final.view.get("over") for final in finals)


def _seated(player_id: str, seat: int, table: lobby_pb2.Table) -> bool:
    return table.seats[seat].player_id == player_id


def _ready(player_id: str, table: lobby_pb2.Table) -> bool:
    return table.games_played > 0 or any(s.player_id == player_id and s.ready for s in table.seats)


def game_for(number: int) -> str:
    """The game of the run's table ``number``: every game of the catalogue in turn."""
    names = list(TABLES)
    return names[number % len(names)]


def seat_actions(ledger: Ledger) -> Mapping[str, list[Acknowledged]]:
    """Acknowledged actions by table."""
    by_table: dict[str, list[Acknowledged]] = {}
    for ack in ledger.acknowledged:
        by_table.setdefault(ack.table_id, []).append(ack)
    return by_table

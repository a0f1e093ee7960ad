"""Act, GetView, Subscribe and Play over the table store: shared by the engine and the arbiter.

The two services differ only in which games they serve (the catalogue's
``service``); everything about playing a table lives here once.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

import grpc
import structlog

from services.play.updates import UpdateCache, field_bytes
from shared.api.stammtisch.v1 import common_pb2, errors_pb2
from shared.config import Settings
from shared.games.catalog import entry
from shared.games.errors import ErrorCode, RuleError
from shared.ids import check_table_id
from shared.infra.runtime import Runtime
from shared.obs.metrics import (
    ACTIONS,
    EVENT_LAG,
    OPEN_STREAMS,
)
from shared.rpc.actions import action_of
from shared.rpc.auth import Identity
from shared.rpc.errors import ServiceError, clipped, invalid, precondition, rule_code_to_proto
from shared.tables.clocks import ClockWorker, check_open
from shared.tables.feed import TableFeeds
from shared.tables.records import CommitRecord
from shared.tables.store import Change
from shared.tables.watchers import Watchers
from shared.tables.writer import TableWriter

MAX_ACTION_ID = 64

#: A service's own check of the head an action is about to be applied to (raises RuleError).
Guard = Callable[[CommitRecord], None]
#: How many messages a Play stream holds for a slow client before it stops reading its feed.
PLAY_BUFFER = 64
#: The most updates one message carries for a client that asked for batches (max_batch).
MAX_BATCH = 1000
#: ... and the most bytes (well below what a client accepts in one message).
BATCH_BYTES = 1024 * 1024


@dataclass(frozen=True)
class PlayStep:
    """One message of a Play stream, whichever service's proto it came in."""

    table_id: str
    after_seq: int
    action_id: str
    action: common_pb2.Action | None
    guard: Guard | None = None
    #: First step only: updates per message while catching up (SubscribeRequest.max_batch).
    max_batch: int = 0
    #: First step only: an applied action's answer rides with its commit's update.
    answers_with_updates: bool = False
    #: First step only: a catch-up message's updates carry no view but the last one's.
    last_view_only: bool = False


@dataclass(slots=True)
class Updates:
    """Serialised updates of consecutive commits, up to ``last_seq``; on a Play stream, with
    the answers to the stream's actions that ride on them."""

    last_seq: int
    updates: list[bytes]
    answers: list[common_pb2.PlayAnswer] = field(default_factory=list)


@dataclass(frozen=True)
class _Ended:
    """A Play stream's helper task finished: how (None: normally)."""

    error: Exception | None


def _bind(table_id: str) -> None:
    """Check the table id and tag the request's log lines with it."""
    structlog.contextvars.bind_contextvars(table_id=check_table_id(table_id))


class TableTurns:
    """A first-come-first-served lock per table, kept only while someone holds or waits for it.

    Commits are optimistic: actions on one table that race inside one process
    would all read the same head, all but one would fail the compare-and-set
    and run again. Taking turns locally leaves conflicts to other replicas only.
    """

    def __init__(self) -> None:
        self._locks: dict[str, tuple[asyncio.Lock, int]] = {}

    def __len__(self) -> int:
        """Tables somebody holds or waits for right now."""
        return len(self._locks)

    @contextlib.asynccontextmanager
    async def turn(self, table_id: str) -> AsyncIterator[None]:
        """Hold the table's lock for the block (waiters go in arrival order)."""
        lock, users = self._locks.get(table_id) or (asyncio.Lock(), 0)
        self._locks[table_id] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._locks[table_id]
            if users == 1:
                del self._locks[table_id]
            else:
                self._locks[table_id] = (lock, users - 1)


class TablePlay:
    """The playing side of tables of some games, for one service in one process."""

    def __init__(self, runtime: Runtime, games: frozenset[str], service: str, settings: Settings) -> None:
        self.games = games
        self.service = service
        self.writer = TableWriter(runtime)
        self.store = self.writer.store
        self.feeds = TableFeeds(runtime, self.store)
        self.clocks = [ClockWorker(self.writer, game) for game in
                       sorted({entry(g).service: g for g in games}.values())]
        self.updates = UpdateCache()
        self.watchers = Watchers(runtime)
        self._turns = TableTurns()
        # Labelled once: a label lookup takes a lock, and these are counted per action or message.
        self._lag = EVENT_LAG.labels(service)
        self._applied = {game: ACTIONS.labels(game, "applied", "") for game in games}

    def update_for(self, record: CommitRecord, seat: int | None) -> bytes:
        """One commit as ``seat`` sees it (None: a spectator): a serialised TableUpdate, shared
        with every caller of that seat."""
        return self.updates.of(record).wire(seat)

    # -- who is asking --------------------------------------------------------------

    def _check_game(self, record: CommitRecord) -> None:
        if record.meta.game not in self.games:
            raise precondition(f"table {record.meta.table_id!r} plays {record.meta.game}, "
                               f"which this service ({self.service}) does not serve")

    def _seat(self, record: CommitRecord, who: Identity) -> int | None:
        return record.meta.seat_of(who.player_id)

    # -- the three calls --------------------------------------------------------------

    async def act(self, who: Identity, table_id: str, action_id: str,
                  action_pb: common_pb2.Action, guard: Guard | None = None) -> bytes:
        """Apply one action of the caller's seat, exactly once per action id; the answer is
        the caller's update of the commit, serialised (a TableUpdate).

        ``guard`` sees the head the action would be applied to, inside the
        atomic commit, and may refuse it before the rules do.
        """
        _bind(table_id)
        act_key = _act_key(who, action_id)
        answer, record = await self._commit_action(who, table_id, act_key, action_of(action_pb),
                                                   guard)
        return await self._reply(who, table_id, answer, record)

    async def _commit_action(self, who: Identity, table_id: str, act_key: str,
                             action: Mapping[str, Any], guard: Guard | None,
                             ) -> tuple[dict[str, Any], CommitRecord | None]:
        """The action's answer and, when at hand, the commit that applied it."""
        game_name = ""

        def change(head: CommitRecord | None) -> Change:
            nonlocal game_name
            assert head is not None
            self._check_game(head)
            check_open(head)
            game_name = head.meta.game
            seat = self._seat(head, who)
            if seat is None:
                raise ServiceError(grpc.StatusCode.PERMISSION_DENIED, "you have no seat at this table")
            if head.meta.is_bot(seat):
                raise precondition("a bot plays your seat now; join the table again to take it back")
            if guard is not None:
                guard(head)
            # The head's streams in this process made their views of it when it was committed
            # (their feeds wake before the next turn): its engine is taken over, not copied.
            game = head.hand_over_engine()
            events = game.apply(seat, action)
            return Change(game, events, head.meta, seat, dict(action))

        try:
            async with self._turns.turn(table_id):
                # announced in commit order (in the table's turn); the announcement never raises
                record, answer = await self.writer.commit(table_id, change, act_key)
        except RuleError as err:
            ACTIONS.labels(game_name, "refused", err.code.value).inc()
            return await self.store.remember_refusal(table_id, act_key, err), None
        if answer is not None:
            return answer, record
        assert record is not None
        self._applied[game_name].inc()
        return {"seq": record.seq}, record

    async def _reply(self, who: Identity, table_id: str, answer: Mapping[str, Any],
                     record: CommitRecord | None) -> bytes:
        if "error" in answer:
            raise RuleError(ErrorCode(answer["error"]), str(answer.get("message", "")))
        if record is None:  # a raced retry of this action id was applied first
            record = await self.store.record(table_id, int(answer["seq"]))
        return self.update_for(record, self._seat(record, who))

    async def view(self, who: Identity, table_id: str) -> bytes:
        """The caller's view of the newest commit (a serialised TableUpdate)."""
        _bind(table_id)
        record = await self.store.head(table_id)
        self._check_game(record)
        return self.update_for(record, self._seat(record, who))

    async def subscribe(self, who: Identity, table_id: str, after_seq: int,
                        max_batch: int = 1, last_view_only: bool = False) -> AsyncIterator[Updates]:
        """Commits after ``after_seq`` as the caller sees them (serialised TableUpdates): the
        log, then live; in batches of up to ``max_batch`` while the log is read (one message
        each then, instead of one per commit), one at a time once live. ``last_view_only``:
        in a batch only the last update carries its view (SubscribeRequest.last_view_only)."""
        _bind(table_id)
        if after_seq < 0:
            raise invalid("after_seq must be >= 0")
        if max_batch < 0:
            raise invalid("max_batch must be >= 0")
        limit = min(max(max_batch, 1), MAX_BATCH)
        head = await self.store.head(table_id)
        self._check_game(head)
        OPEN_STREAMS.labels(self.service).inc()
        self.watchers.opened(table_id, who.player_id)
        # aclosing: when this stream is closed (its client gone), the feed closes at once too
        # and gives up its NATS subscription, instead of whenever the garbage collector gets to it.
        # Catching up, this stream's update of each commit is made while the page's one engine
        # is at that commit (each commit keeps only its state's JSON afterwards).
        # Asked for the last view of a batch only, no view is made while the engine goes
        # through the page: the last update of each batch gets its view when it is sent.
        made: dict[int, bytes] = {}
        viewless = last_view_only and limit > 1

        def make(record: CommitRecord) -> None:
            made[record.seq] = self.update_for(record, self._seat(record, who))

        def finished(batch: list[bytes], last: CommitRecord) -> Updates:
            if viewless:
                batch[-1] = self.update_for(last, self._seat(last, who))
            return Updates(last.seq, batch)

        try:
            async with contextlib.aclosing(
                    self.feeds.runs(table_id, after_seq, None if viewless else make,
                                    states_only=viewless, seat=self._seat(head, who))) as runs:
                async for run in runs:
                    batch: list[bytes] = []
                    size = 0
                    previous = run[0]
                    for record in run:
                        update = made.pop(record.seq, None)
                        if update is None:  # a live commit, or one whose view waits (viewless)
                            seat = self._seat(record, who)
                            update = (self.updates.of(record).without_view(seat) if viewless
                                      else self.update_for(record, seat))
                        if record.seq > head.seq:
                            self._lag.observe(max(0.0, time.time() - record.at))
                        if batch and (len(batch) == limit or size + len(update) > BATCH_BYTES):
                            yield finished(batch, previous)
                            batch, size = [], 0
                        batch.append(update)
                        size += len(update)
                        previous = record
                    yield finished(batch, previous)
        finally:
            OPEN_STREAMS.labels(self.service).dec()
            self.watchers.closed(table_id, who.player_id)


    async def play_stream(self, who: Identity, steps: AsyncIterator[PlayStep],
                          ) -> AsyncIterator[Updates | common_pb2.PlayAnswer]:
        """Subscribe and act on one stream: the first step names the table and ``after_seq``;
        updates come as in :meth:`subscribe`, and each action step gets one answer, in order.

        Two tasks feed one bounded queue: one follows the table, one applies the
        client's actions one after another (exactly once per action id, as Act).
        A refusal is an answer; anything else either task raises ends the stream
        with its status. When the client stops sending, the updates go on.

        With ``answers_with_updates`` an answer waits for the update of its
        commit and goes out in the same message (one message fewer per
        action). An answer whose update went out already, or that has none (a
        refusal), goes alone, unless answers before it still wait: answers
        keep the order of the actions.
        """
        first = await anext(steps, None)
        if first is None:
            return
        table_id = first.table_id
        _bind(table_id)
        out: asyncio.Queue[Updates | common_pb2.PlayAnswer | _Ended] = asyncio.Queue(PLAY_BUFFER)
        riding = RidingAnswers(first.after_seq) if first.answers_with_updates else None

        async def follow() -> None:
            updates = cast(AsyncGenerator[Updates, None],
                           self.subscribe(who, table_id, first.after_seq, first.max_batch,
                                          first.last_view_only))
            async with contextlib.aclosing(updates):
                async for update in updates:
                    if riding is not None:
                        update.answers.extend(riding.sent(update.last_seq))
                    await out.put(update)

        async def answer_all() -> None:
            step: PlayStep | None = first
            while step is not None:
                if step.table_id not in ("", table_id):
                    raise invalid(f"this Play stream plays table {table_id!r}, not {step.table_id!r}")
                if step.action is not None or step.action_id:
                    answer = await self._answer(who, table_id, step)
                    if riding is None or not riding.wait(answer):
                        await out.put(answer)
                step = await anext(steps, None)

        async def reporting(work: Callable[[], Any], ends_stream: bool) -> None:
            try:
                await work()
            except Exception as exc:  # noqa: BLE001 - handed to the stream, which raises it
                await out.put(_Ended(exc))
                return
            if ends_stream:
                await out.put(_Ended(None))

        tasks = [asyncio.create_task(reporting(follow, True), name="play-follow"),
                 asyncio.create_task(reporting(answer_all, False), name="play-actions")]
        try:
            while True:
                item = await out.get()
                if isinstance(item, _Ended):
                    if item.error is not None:
                        raise item.error
                    return
                yield item
        finally:
            await _stop_all(tasks)

    async def _answer(self, who: Identity, table_id: str, step: PlayStep) -> common_pb2.PlayAnswer:
        """Apply one action of a Play stream; the refusal, if any, is the answer."""
        act_key = _act_key(who, step.action_id)
        try:
            action = action_of(step.action or common_pb2.Action())
        except RuleError as err:
            answer: Mapping[str, Any] = {"error": err.code.value, "message": err.message}
        else:
            answer, _record = await self._commit_action(who, table_id, act_key, action, step.guard)
        if "error" in answer:
            return common_pb2.PlayAnswer(action_id=step.action_id, refused=errors_pb2.RuleViolation(
                code=rule_code_to_proto(ErrorCode(answer["error"])),
                message=clipped(str(answer.get("message", "")))))
        return common_pb2.PlayAnswer(action_id=step.action_id, seq=int(answer["seq"]))


class RidingAnswers:
    """A Play stream's answers waiting for the update they ride on, in the actions' order."""

    def __init__(self, after_seq: int) -> None:
        #: The newest seq whose update the stream has sent.
        self._sent = after_seq
        #: (seq whose update the answer waits for, answer), oldest first.
        self._waiting: list[tuple[int, common_pb2.PlayAnswer]] = []

    def wait(self, answer: common_pb2.PlayAnswer) -> bool:
        """Hold ``answer`` for its update (True), or False: it goes alone, now."""
        seq = answer.seq if answer.HasField("seq") else 0
        if self._waiting:  # behind an earlier answer, never before it
            seq = max(seq, self._waiting[-1][0])
        elif seq <= self._sent:
            return False
        self._waiting.append((seq, answer))
        return True

    def sent(self, last_seq: int) -> list[common_pb2.PlayAnswer]:
        """The updates through ``last_seq`` go out now: the answers that ride with them."""
        self._sent = last_seq
        count = 0
        while count < len(self._waiting) and self._waiting[count][0] <= last_seq:
            count += 1
        riding = [answer for _seq, answer in self._waiting[:count]]
        del self._waiting[:count]
        return riding


def with_update(response: type[Any], update: bytes) -> bytes:
    """A service's response message carrying a serialised update (its field ``update``), as
    wire bytes: the shared update is neither copied into the message nor serialised again."""
    return field_bytes(_field_number(response, "update"), update)


def with_updates(response: type[Any], batch: list[bytes]) -> bytes:
    """A Subscribe response carrying a batch of serialised updates: one in ``update``, more
    in ``updates``, as wire bytes."""
    if len(batch) == 1:
        return with_update(response, batch[0])
    return _repeated(_field_number(response, "updates"), batch)


def _repeated(number: int, updates: list[bytes]) -> bytes:
    """Serialised updates as the repeated message field ``number``."""
    return b"".join(field_bytes(number, update) for update in updates)


def _field_number(response: type[Any], name: str) -> int:
    number = _FIELDS.get((response, name))
    if number is None:
        number = _FIELDS[response, name] = int(response.DESCRIPTOR.fields_by_name[name].number)
    return number


#: (Response message class, field name) -> the field's number.
_FIELDS: dict[tuple[type[Any], str], int] = {}
#: The field of the serialised updates in a TableUpdates message.
_TABLE_UPDATES_FIELD = int(common_pb2.TableUpdates.DESCRIPTOR.fields_by_name["updates"].number)


def play_response(item: Updates | common_pb2.PlayAnswer, response: type[Any]) -> Any:
    """One item of :meth:`TablePlay.play_stream` as a service's Play response (wire bytes for
    updates: one in ``update``, more in ``updates``, the answers riding on them in
    ``answers``; the message for an answer alone)."""
    if isinstance(item, common_pb2.PlayAnswer):
        return response(answer=item)
    if len(item.updates) == 1:
        wire = with_update(response, item.updates[0])
    else:
        wire = field_bytes(_field_number(response, "updates"),
                           _repeated(_TABLE_UPDATES_FIELD, item.updates))
    if item.answers:
        wire += _repeated(_field_number(response, "answers"),
                          [answer.SerializeToString() for answer in item.answers])
    return wire


async def _stop_all(tasks: list[asyncio.Task[None]]) -> None:
    """Cancel the tasks until they have ended. One cancellation can be lost inside a library
    call (Python 3.11's ``asyncio.wait_for``, which nats-py uses, returns instead of raising
    when the cancellation meets its result; redis-py's use of it is mended in
    shared/infra/redis_connections.py), and a stream's helper must not outlive the stream. The caller
    being cancelled again meanwhile (grpc cancels a call once for its deadline and once more
    when it is closed) does not end the stopping early: that left a feed task, and the stream
    counted open, until the process stopped. The caller's cancellation is raised afterwards."""
    cancelled = False
    while pending := [task for task in tasks if not task.done()]:
        for task in pending:
            task.cancel()
        try:
            await asyncio.wait(pending, timeout=0.1)
        except asyncio.CancelledError:
            cancelled = True
    if cancelled:
        raise asyncio.CancelledError


def _act_key(who: Identity, action_id: str) -> str:
    """The key an action's answer is remembered under (one per player and action id)."""
    if not 1 <= len(action_id) <= MAX_ACTION_ID:
        raise invalid(f"action_id must be 1 to {MAX_ACTION_ID} characters")
    return f"{who.player_id}:{action_id}"

"""Deadlines: turn clocks for people, pacing for bots, round time limits, the idle close.

Every decision a seat owes gets a deadline when it becomes owed; it keeps it
while it stays owed. When a deadline passes, whichever replica's worker gets
there first commits the default answer (or the bot's choice); the commit is
conditional on the head it read, so exactly one answer is applied.

Every running game also has an idle deadline, ``idle_seconds`` after a person
last changed it (an action, leaving, taking a seat back; the game's start
counts too). The clock's own commits (bot moves, timed-out defaults, a round's
time up) do not move it, so a game that only the clock still plays is closed
(``table_closed``) when it passes: no table runs on forever (shared/tables/README.md, "Table lifetime").
"""

from __future__ import annotations

import dataclasses
import time
from typing import TYPE_CHECKING

from shared.games.base import derived_rng
from shared.games.errors import ErrorCode, RuleError
from shared.games.registry import bot_levels
from shared.infra.tasks import poll_forever
from shared.obs.logs import get_logger
from shared.obs.metrics import TABLES_CLOSED, TURN_CLOCK_EXPIRIES
from shared.tables.records import CommitRecord
from shared.tables.store import Change, DeadlinePolicy, NothingToDo

if TYPE_CHECKING:
    from shared.tables.writer import TableWriter

log = get_logger("clocks")

#: Deadline key prefix of a round time limit; the key names the round ("round:2").
ROUND_PREFIX = "round:"
#: Deadline key of the idle close: the game closes then unless a person changes it before.
IDLE_KEY = "idle"
#: The reason an idle game is closed with (``TableMeta.closed``, the ``table_closed`` event).
CLOSED_IDLE = "idle"
#: Event types of the clock's own commits: a default answer and a round's time limit.
TIMED_OUT, TIME_UP = "timed_out", "time_up"
_REINDEX = """
if redis.call('HGET', KEYS[1], 'seq') ~= ARGV[1] then return 0 end
if ARGV[2] == '' then
  redis.call('ZREM', KEYS[2], ARGV[3])
else
  redis.call('ZADD', KEYS[2], ARGV[2], ARGV[3])
end
return 1
"""


def deadline_policy(bot_delay: float, idle_seconds: float) -> DeadlinePolicy:
    """Deadlines for the head a change produces (people: the table's turn_seconds; every
    running game: the idle close, ``idle_seconds`` after a person last changed it, or twice the
    turn clock when that is longer and a person still holds a seat: a game played by
    notification waits days for a move, one left to stand-in bots does not)."""

    def policy(head: CommitRecord | None, change: Change, now: float) -> dict[str, float]:
        game, meta = change.game, change.meta
        if game.over or meta.closed:
            return {}
        same_game = head is not None and head.meta.game_no == meta.game_no
        before = head.deadlines if head is not None and same_game else {}
        deadlines: dict[str, float] = {}
        timed = meta.turn_seconds > 0 and not type(game).simultaneous
        # Nobody's turn is clocked at a table of people without a turn time: no need to ask.
        for seat in game.to_act() if timed or meta.bots else ():
            key = str(seat)
            if meta.is_bot(seat):
                wait = bot_delay
            elif timed:
                wait = meta.turn_seconds
            else:
                continue
            keep = key in before and change.actor != seat and (
                meta.is_bot(seat) == (head is not None and head.meta.is_bot(seat)))
            deadlines[key] = before[key] if keep else now + wait
        limit = game.round_limit()
        if limit is not None:
            key = f"{ROUND_PREFIX}{limit[0]}"
            deadlines[key] = before.get(key, now + limit[1])
        quiet = IDLE_KEY in before and _by_clock(change)
        people = any(player and not meta.is_bot(seat) for seat, player in enumerate(meta.players))
        idle = max(idle_seconds, 2 * meta.turn_seconds) if timed and people else idle_seconds
        deadlines[IDLE_KEY] = before[IDLE_KEY] if quiet else now + idle
        return deadlines

    return policy


def _by_clock(change: Change) -> bool:
    """True for a commit the clock made: a bot's move, a timed-out default, a round's time up."""
    if change.actor is not None and change.meta.is_bot(change.actor):
        return True
    return bool(change.events) and change.events[0].get("type") in (TIMED_OUT, TIME_UP)


def shown_deadlines(deadlines: dict[str, float]) -> dict[str, float]:
    """The deadlines clients are shown: decisions seats owe and a round's time limit.

    The idle close is no decision anyone owes; a client learns of it from ``table_closed``.
    """
    return {key: at for key, at in deadlines.items() if key != IDLE_KEY}


def check_open(head: CommitRecord) -> None:
    """Refuse (GAME_OVER) anything on a table that was closed."""
    if head.meta.closed:
        raise RuleError(ErrorCode.GAME_OVER,
                        f"table {head.meta.table_id!r} was closed ({head.meta.closed})")


def expire(head: CommitRecord, now: float) -> Change:
    """The change a passed deadline causes: a default action, a bot move, time up, or the close."""
    due = sorted((at, key) for key, at in head.deadlines.items() if at <= now)
    if not due:
        raise NothingToDo
    key = due[0][1]
    game = head.game()
    if key == IDLE_KEY:
        closed = dataclasses.replace(head.meta, closed=CLOSED_IDLE)
        return Change(game, [{"type": "table_closed", "reason": CLOSED_IDLE}], closed)
    if key.startswith(ROUND_PREFIX):
        round_no = int(key.removeprefix(ROUND_PREFIX))
        events = [{"type": TIME_UP, "round": round_no},
                  *game.time_up(round_no)]
        return Change(game, events, head.meta)
    seat = int(key)
    if head.meta.is_bot(seat):
        bot = bot_levels(head.meta.game)[head.meta.bots[key]]()
        action = bot.choose(game.view(seat), derived_rng(head.meta.seed, "bot", head.seq, seat))
        events = game.apply(seat, action)
        return Change(game, events, head.meta, seat, action)
    default = game.default_action(seat)
    if default is None:
        raise NothingToDo
    events = [{"type": TIMED_OUT, "seat": seat}, *game.apply(seat, default)]
    TURN_CLOCK_EXPIRIES.labels(head.meta.game).inc()
    return Change(game, events, head.meta, seat, default)


class ClockWorker:
    """Polls one clock group's index, every shard of it, and fires what is due."""

    def __init__(self, writer: TableWriter, game: str, interval: float = 0.05) -> None:
        self.writer = writer
        self.store = writer.store
        self.game = game
        self.interval = interval
        self._reindex = self.store.redis.register_script(_REINDEX)

    async def run_forever(self) -> None:
        """Fire due deadlines until cancelled."""
        await poll_forever(self.run_once, self.interval, log, "clock_failed")

    def clocks_key(self, table_id: str) -> str:
        """The shard of the index that lists the table."""
        return self.store.clocks_key(self.game, self.store.shard_of(table_id))

    async def run_once(self) -> int:
        """Fire every due table once; returns how many commits were made."""
        now = time.time()
        async with self.store.redis.pipeline(transaction=False) as pipe:  # one round trip per master
            for shard in self.store.runtime.shards.all():
                pipe.zrangebyscore(self.store.clocks_key(self.game, shard), "-inf", now, start=0, num=50)
            due = await pipe.execute()
        fired = 0
        for raw in (raw for shard_due in due for raw in shard_due):
            fired += await self.fire(raw.decode())
        return fired

    async def fire(self, table_id: str) -> int:
        """Commit the answer to the earliest passed deadline of a table, if still due."""
        try:
            record, _ = await self.writer.commit(table_id, _expire_now)
        except NothingToDo:
            await self._fix_index(table_id)
            return 0
        except RuleError as err:
            log.error("default_action_refused", table_id=table_id, code=err.code.value,
                      message=err.message)
            await self.store.redis.zadd(self.clocks_key(table_id), {table_id: time.time() + 5})
            return 0
        if record is not None and record.meta.closed:
            TABLES_CLOSED.labels(record.meta.game, record.meta.closed).inc()
            log.info("table_closed", table_id=table_id, reason=record.meta.closed, seq=record.seq)
        return 1

    async def _fix_index(self, table_id: str) -> None:
        """The index said due but the head has nothing due: store the head's true next deadline."""
        try:
            head = await self.store.head(table_id)
        except Exception:  # noqa: BLE001 - a vanished table just leaves the index
            await self.store.redis.zrem(self.clocks_key(table_id), table_id)
            return
        soonest = min(head.deadlines.values()) if head.deadlines else ""
        await self._reindex(keys=[self.store.key(table_id, "head"), self.clocks_key(table_id)],
                            args=[str(head.seq), soonest, table_id])


def _expire_now(head: CommitRecord | None) -> Change:
    if head is None:
        raise NothingToDo
    return expire(head, time.time())

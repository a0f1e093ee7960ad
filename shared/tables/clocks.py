"""Deadlines: turn clocks for people, pacing for bots, round time limits.

Every decision a seat owes gets a deadline when it becomes owed; it keeps it
while it stays owed. When a deadline passes, whichever replica's worker gets
there first commits the default answer (or the bot's choice); the commit is
conditional on the head it read, so exactly one answer is applied.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from shared.games.base import derived_rng
from shared.games.errors import RuleError
from shared.games.registry import bot_levels
from shared.logs import get_logger
from shared.metrics import TURN_CLOCK_EXPIRIES
from shared.runtime import UNREACHABLE
from shared.tables.records import CommitRecord
from shared.tables.store import Change, DeadlinePolicy, NothingToDo, TableStore
from shared.tasks import not_cancelled

log = get_logger("clocks")

#: Deadline key prefix of a round time limit; the key names the round ("round:2").
ROUND_PREFIX = "round:"
#: How long a clock worker waits after Redis did not answer.
PAUSE_SECONDS = 0.5
_REINDEX = """
if redis.call('HGET', KEYS[1], 'seq') ~= ARGV[1] then return 0 end
if ARGV[2] == '' then
  redis.call('ZREM', KEYS[2], ARGV[3])
else
  redis.call('ZADD', KEYS[2], ARGV[2], ARGV[3])
end
return 1
"""


def deadline_policy(bot_delay: float) -> DeadlinePolicy:
    """Deadlines for the head a change produces (people: the table's turn_seconds)."""

    def policy(head: CommitRecord | None, change: Change, now: float) -> dict[str, float]:
        game, meta = change.game, change.meta
        if game.over:
            return {}
        same_game = head is not None and head.meta.game_no == meta.game_no
        before = head.deadlines if head is not None and same_game else {}
        public = game.view(None)
        deadlines: dict[str, float] = {}
        for seat in game.to_act():
            key = str(seat)
            if meta.is_bot(seat):
                wait = bot_delay
            elif meta.turn_seconds > 0 and not type(game).simultaneous:
                wait = meta.turn_seconds
            else:
                continue
            keep = key in before and change.actor != seat and (
                meta.is_bot(seat) == (head is not None and head.meta.is_bot(seat)))
            deadlines[key] = before[key] if keep else now + wait
        limit = public.get("round_seconds")
        if limit:
            key = f"{ROUND_PREFIX}{public.get('round')}"
            deadlines[key] = before.get(key, now + float(limit))
        return deadlines

    return policy


def expire(head: CommitRecord, now: float) -> Change:
    """The change a passed deadline causes: a default action, a bot move, or time up."""
    due = sorted((at, key) for key, at in head.deadlines.items() if at <= now)
    if not due:
        raise NothingToDo
    key = due[0][1]
    game = head.game()
    if key.startswith(ROUND_PREFIX):
        round_no = int(key.removeprefix(ROUND_PREFIX))
        events = [{"type": "time_up", "round": round_no},
                  *game.time_up(round_no)]  # type: ignore[attr-defined]
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
    events = [{"type": "timed_out", "seat": seat}, *game.apply(seat, default)]
    TURN_CLOCK_EXPIRIES.labels(head.meta.game).inc()
    return Change(game, events, head.meta, seat, default)


class ClockWorker:
    """Polls one clock group's index and fires what is due."""

    def __init__(self, store: TableStore, game: str, announce: Any, interval: float = 0.05) -> None:
        self.store = store
        self.clocks_key = store.clocks_key(game)
        self.announce = announce
        self.interval = interval
        self._reindex = store.redis.register_script(_REINDEX)

    async def run_forever(self) -> None:
        """Fire due deadlines until cancelled."""
        while not_cancelled():
            try:
                fired = await self.run_once()
            except UNREACHABLE as exc:  # Redis away: no traceback storm, try again in a while
                log.warning("clock_paused", error=repr(exc))
                await asyncio.sleep(PAUSE_SECONDS)
                fired = 0
            except Exception:
                log.exception("clock_failed")
                fired = 0
            if not fired:
                await asyncio.sleep(self.interval)

    async def run_once(self) -> int:
        """Fire every due table once; returns how many commits were made."""
        now = time.time()
        due = await self.store.redis.zrangebyscore(self.clocks_key, "-inf", now, start=0, num=50)
        fired = 0
        for raw in due:
            fired += await self.fire(raw.decode())
        return fired

    async def fire(self, table_id: str) -> int:
        """Commit the answer to the earliest passed deadline of a table, if still due."""
        try:
            record, _ = await self.store.commit(table_id, _expire_now)
        except NothingToDo:
            await self._fix_index(table_id)
            return 0
        except RuleError as err:
            log.error("default_action_refused", table_id=table_id, code=err.code.value,
                      message=err.message)
            await self.store.redis.zadd(self.clocks_key, {table_id: time.time() + 5})
            return 0
        if record is not None:
            await self.announce(record)
        return 1

    async def _fix_index(self, table_id: str) -> None:
        """The index said due but the head has nothing due: store the head's true next deadline."""
        try:
            head = await self.store.head(table_id)
        except Exception:  # noqa: BLE001 - a vanished table just leaves the index
            await self.store.redis.zrem(self.clocks_key, table_id)
            return
        soonest = min(head.deadlines.values()) if head.deadlines else ""
        await self._reindex(keys=[self.store.key(table_id, "head"), self.clocks_key],
                            args=[str(head.seq), soonest, table_id])


def _expire_now(head: CommitRecord | None) -> Change:
    if head is None:
        raise NothingToDo
    return expire(head, time.time())

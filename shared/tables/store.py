"""Atomic commits of table state to Redis, with the log, idempotency and clock index.

A commit reads the head record, applies a pure change, and writes the new
head, the log entry, the clocks index and (for an action) its answer in one
Lua script that succeeds only if nobody committed in between; otherwise the
change is re-run on the newer head. The order of successful commits is the
table's order, whichever replica made them.

The script touches one Redis Cluster slot: a table's keys carry its shard's
hash tag, and the indexes it updates (clocks, outbox, live tables) are that
shard's (shared/infra/shards.py). Before a commit is answered, a replica holds it
(shared/infra/replicas.py; only where replicas are waited for).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

from shared.errors import Busy, NotFound
from shared.games.base import Game
from shared.games.errors import RuleError
from shared.games.record import dumps
from shared.infra.redis_batch import BatchedScript
from shared.infra.runtime import Runtime
from shared.obs.logs import get_logger
from shared.obs.metrics import COMMIT_RETRIES
from shared.tables.log import SNAPSHOT_EVERY, TABLE_TTL_MS, TableLog
from shared.tables.records import CommitRecord, TableMeta

log = get_logger("store")

MAX_ATTEMPTS = 50
_COMMIT = """
-- KEYS: head, log, acts, clocks, outbox, live
-- ARGV: expected_seq, record, act_key, answer, min_deadline, table_id, has_results, now_ms, ttl_ms,
--       game_over (or the table closed), log entry ('' : the log keeps the record itself)
if ARGV[3] ~= '' then
  local prev = redis.call('HGET', KEYS[3], ARGV[3])
  if prev then return {'dup', prev} end
end
local cur = tonumber(redis.call('HGET', KEYS[1], 'seq') or '0')
if cur ~= tonumber(ARGV[1]) then return {'conflict', tostring(cur), redis.call('HGET', KEYS[1], 'rec')} end
local seq = cur + 1
redis.call('HSET', KEYS[1], 'seq', seq, 'rec', ARGV[2])
if ARGV[11] == '' then
  redis.call('XADD', KEYS[2], seq .. '-0', 'rec', ARGV[2])
else
  redis.call('XADD', KEYS[2], seq .. '-0', 'act', ARGV[11])
end
if ARGV[3] ~= '' then redis.call('HSET', KEYS[3], ARGV[3], ARGV[4]) end
if ARGV[5] ~= '' then
  redis.call('ZADD', KEYS[4], ARGV[5], ARGV[6])
else
  redis.call('ZREM', KEYS[4], ARGV[6])
end
if ARGV[7] == '1' then redis.call('ZADD', KEYS[5], ARGV[8], ARGV[6] .. '|' .. seq) end
if ARGV[10] == '1' then
  redis.call('ZREM', KEYS[6], ARGV[6])
else
  redis.call('ZADD', KEYS[6], ARGV[8], ARGV[6])
end
for i = 1, 3 do redis.call('PEXPIRE', KEYS[i], ARGV[9]) end
return {'ok', tostring(seq)}
"""

#: Events that are results: published durably for scoring.
RESULT_EVENTS = ("round_over", "game_over")


@dataclass
class Change:
    """What a commit does: the engine after the change (handed over: the record keeps it), its events
    and the new meta. ``actor``/``action``, when given, must be all that made ``game`` from the head
    (the log keeps only the action and re-applies it); without them the commit is logged whole."""

    game: Game
    events: list[dict[str, Any]]
    meta: TableMeta
    actor: int | None = None
    action: dict[str, Any] | None = None


class NothingToDo(Exception):
    """Raised by a change function that finds, on the newest head, nothing to change."""


#: Computes the deadlines of a new head: (previous head, change, now) -> key -> expiry.
DeadlinePolicy = Callable[[CommitRecord | None, Change, float], dict[str, float]]


class TableStore(TableLog):
    """Commits tables of one deployment; reads as :class:`TableLog`. Writers go through
    :class:`shared.tables.writer.TableWriter`, which announces every commit it makes."""

    def __init__(self, runtime: Runtime, deadlines: DeadlinePolicy) -> None:
        super().__init__(runtime)
        self.deadlines = deadlines
        self._script = BatchedScript(self.redis, _COMMIT)

    async def remember_refusal(self, table_id: str, act_key: str, err: RuleError) -> dict[str, Any]:
        """Store a refusal so a retried action id gets the same answer; returns the first answer."""
        answer = {"error": err.code.value, "message": err.message}
        key = self.key(table_id, "acts")
        if not await self.redis.hsetnx(key, act_key, dumps(answer)):
            stored = await self.answer(table_id, act_key)
            return stored or answer
        await self.redis.pexpire(key, TABLE_TTL_MS)
        return answer

    async def create(self, meta: TableMeta, game: Game, events: list[dict[str, Any]]) -> CommitRecord:
        """Start a game at a table (the next of a series continues the sequence numbers)."""

        def start(_head: CommitRecord | None) -> Change:
            return Change(game, events, meta)

        # Keyed like an action (player action keys always hold a ':', this one never does), so a
        # commit re-sent after its reply was lost answers with the first start instead of a second.
        record, _ = await self.commit(meta.table_id, start, f"start/{meta.game_no}/{meta.seed}",
                                      allow_new=True)
        assert record is not None  # a start is never refused, so its answer is always a seq
        return record

    async def commit(
        self, table_id: str, change_fn: Callable[[CommitRecord | None], Change],
        act_key: str = "", allow_new: bool = False,
    ) -> tuple[CommitRecord | None, dict[str, Any] | None]:
        """Apply ``change_fn`` to the newest head and commit it atomically (one round trip when this
        process made or saw that head). Returns (record, None), or for an ``act_key`` answered already
        (stored answer, record); raises what ``change_fn`` raises without committing."""
        # The first attempt runs on the head this process last saw, without reading it: the
        # script's compare-and-set (and its check of the action id) tells whether it was the
        # newest. Only a head read from Redis may refuse, so a stale one is read again. A lost
        # compare-and-set answers with the newest head, so the next attempt reads nothing either.
        known = self._heads.get(table_id)
        newest: CommitRecord | None = None
        head: CommitRecord | None
        for attempt in range(MAX_ATTEMPTS):
            unread = known is not None
            if known is not None:
                head, known = known, None
                try:
                    change = change_fn(head)
                except Exception:  # noqa: BLE001 - judged again on the newest head below
                    continue
            elif newest is not None:
                head, newest = newest, None
                change = change_fn(head)
            else:
                head, stored = await self._read(table_id, act_key)
                if stored is not None:
                    return await self._answered(table_id, stored)
                if head is None and not allow_new:
                    raise NotFound(f"a game at table {table_id!r}")
                change = change_fn(head)
            now = time.time()
            seq = (head.seq if head else 0) + 1
            deadlines = self.deadlines(head, change, now)
            record = CommitRecord(seq, now, change.meta, None, change.events, deadlines,
                                  change.actor, change.action, change.game)
            has_results = any(e.get("type") in RESULT_EVENTS for e in change.events)
            shard = self.shard_of(table_id)
            status, *value = await self._script(
                keys=[self.key(table_id, "head"), self.key(table_id, "log"),
                      self.key(table_id, "acts"), self.clocks_key(change.meta.game, shard),
                      self.outbox_key(shard), self.live_key(change.meta.game, shard)],
                args=[seq - 1, record.encode(), act_key, dumps({"seq": seq}),
                      min(deadlines.values()) if deadlines else "", table_id,
                      "1" if has_results else "0", int(now * 1000), TABLE_TTL_MS,
                      "1" if change.game.over or change.meta.closed else "0",
                      b"" if _snapshot(head, change, seq) else record.entry()])
            if status == b"ok":
                await self.runtime.replicas.after(self.key(table_id, "head"))
                self._remember(record)
                return record, None
            if status == b"dup":
                return await self._answered(table_id, dict(orjson.loads(value[0])))
            if not unread:  # a head read from Redis lost a race; an unread one was merely old
                COMMIT_RETRIES.labels(change.meta.game).inc()
            log.debug("commit_conflict", table_id=table_id, attempt=attempt, seq=int(value[0]))
            if len(value) > 1:
                newest = self._learned(table_id, value[1])
        raise Busy(f"table {table_id!r} is busy; retry")

    async def _read(self, table_id: str, act_key: str) -> tuple[CommitRecord | None, dict[str, Any] | None]:
        """The head and, for an action, its stored answer, in one round trip."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hget(self.key(table_id, "head"), "rec")
            if act_key:
                pipe.hget(self.key(table_id, "acts"), act_key)
            replies = await pipe.execute()
        head = None if replies[0] is None else self._learned(table_id, replies[0])
        stored = None if not act_key or replies[1] is None else dict(orjson.loads(replies[1]))
        return head, stored

    async def _answered(self, table_id: str,
                        answer: dict[str, Any]) -> tuple[CommitRecord | None, dict[str, Any]]:
        """An already answered action: the record that applied it (None for a refusal). Answered again
        only once a replica holds it, like a first answer: the first attempt's master may have died."""
        await self.runtime.replicas.after(self.key(table_id, "head"))
        if "seq" in answer:
            return await self.record(table_id, int(answer["seq"])), answer
        return None, answer


def _snapshot(head: CommitRecord | None, change: Change, seq: int) -> bool:
    """Whether the log keeps this commit whole: the first commit, every ``SNAPSHOT_EVERY``-th
    seq, and every commit no seat's action explains (a game start, a time limit, seating, the
    close) or that changes the meta."""
    return (head is None or seq % SNAPSHOT_EVERY == 0 or change.actor is None or change.action is None
            or (change.meta is not head.meta and change.meta != head.meta))

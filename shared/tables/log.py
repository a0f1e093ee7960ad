"""The read path of live tables: heads, the log, stored answers, and the keys they live under.

Every reader (streams catching up, the lobby's sweep, history, audits) reads through a
:class:`TableLog`; only :class:`shared.tables.store.TableStore` writes. A head read once is
decoded once per process and kept (``known``), and a head newer than this process had goes
to this process's streams at once (``_learned``).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import orjson

from shared.errors import NotFound
from shared.games.catalog import entry
from shared.infra.runtime import Runtime
from shared.tables.records import CommitRecord, replay

#: How long a table's keys live after its last commit.
TABLE_TTL_MS = 7 * 86_400 * 1000
#: Tables whose newest decoded head this process keeps (see TableLog.known).
KNOWN_HEADS = 4096
#: Every commit whose seq is a multiple of this is a snapshot in the log (besides those no seat's
#: action explains): reading one seq re-applies fewer actions than this.
SNAPSHOT_EVERY = 100


class TableLog:
    """Reads the tables of one deployment (one key prefix)."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.redis = runtime.redis
        self._heads: OrderedDict[str, CommitRecord] = OrderedDict()

    def known(self, table_id: str, blob: bytes) -> CommitRecord:
        """The record stored as ``blob``, decoded once per process: a commit reaches a process several
        times as the same bytes (its head, the next head read, the announcement), and comparing bytes
        is far cheaper than parsing the state again."""
        head = self._heads.get(table_id)
        if head is None or head.encode() != blob:
            head = CommitRecord.decode(blob)
            self._remember(head)
        return head

    def _learned(self, table_id: str, blob: bytes) -> CommitRecord:
        """A head just read from Redis (:meth:`known`). One newer than any this process had is another
        process's commit still on its way here: it goes to this process's streams now, so the commit
        about to follow reaches them without a gap."""
        before = self._heads.get(table_id)
        record = self.known(table_id, blob)
        if before is None or record.seq > before.seq:
            self.runtime.local_commits.deliver(record.meta.table_id, record)
        return record

    def _remember(self, record: CommitRecord) -> None:
        """Keep ``record`` as its table's newest known head (records are never changed)."""
        table_id = record.meta.table_id
        known = self._heads.get(table_id)
        if known is None or known.seq <= record.seq:
            self._heads[table_id] = record
            self._heads.move_to_end(table_id)
            if len(self._heads) > KNOWN_HEADS:
                self._heads.popitem(last=False)

    def key(self, table_id: str, part: str) -> str:
        """A key of one table; its shard's hash tag keeps it in the slot of the shard's indexes."""
        return self.runtime.table_key(table_id, part)

    def shard_of(self, table_id: str) -> int:
        """The shard whose indexes list the table."""
        return self.runtime.shards.of(table_id)

    def clocks_key(self, game: str, shard: int) -> str:
        """One shard of the sorted set of tables with deadlines for the service running ``game``."""
        return self.runtime.shard_key("clocks", shard, entry(game).service)

    def live_key(self, game: str, shard: int) -> str:
        """One shard of the tables of ``game`` with a running game, by the time of their last commit."""
        return self.runtime.shard_key("live", shard, game)

    async def live_tables(self, game: str) -> int:
        """How many tables of ``game`` have a running game; forgets those whose keys expired."""
        expired_before_ms = int(time.time() * 1000) - TABLE_TTL_MS
        async with self.redis.pipeline(transaction=False) as pipe:
            for shard in self.runtime.shards.all():
                key = self.live_key(game, shard)
                pipe.zremrangebyscore(key, "-inf", expired_before_ms)
                pipe.zcard(key)
            replies = await pipe.execute()
        return sum(int(count) for count in replies[1::2])

    def outbox_key(self, shard: int) -> str:
        """One shard of the results committed but not yet acknowledged by JetStream:
        "table|seq" by time."""
        return self.runtime.shard_key("outbox", shard)

    async def head(self, table_id: str) -> CommitRecord:
        """The newest commit of a table; NotFound when there is no game."""
        blob = await self.redis.hget(self.key(table_id, "head"), "rec")
        if blob is None:
            raise NotFound(f"a game at table {table_id!r}")
        return self.known(table_id, blob)

    async def head_seqs(self, table_ids: list[str]) -> list[int]:
        """The newest seq of each table (0: none), in one round trip."""
        async with self.redis.pipeline(transaction=False) as pipe:
            for table_id in table_ids:
                pipe.hget(self.key(table_id, "head"), "seq")
            replies = await pipe.execute()
        return [int(seq or 0) for seq in replies]

    async def record(self, table_id: str, seq: int) -> CommitRecord:
        """The commit with this sequence number."""
        known = self._heads.get(table_id)
        if known is not None and known.seq == seq:
            return known
        records = await self.log_after(table_id, seq - 1, limit=1)
        if not records or records[0].seq != seq:
            raise NotFound(f"commit {seq} of table {table_id!r}")
        return records[0]

    async def log_after(self, table_id: str, after_seq: int, limit: int = 1000,
                        previous: CommitRecord | None = None, states_only: bool = False,
                        visit: Callable[[CommitRecord], None] | None = None) -> list[CommitRecord]:
        """Commits with seq > after_seq, oldest first, at most ``limit``, each whole. ``previous`` (the
        commit ``after_seq``) spares reading back to a snapshot; ``states_only``: one engine walks the
        page, each commit keeping its state as JSON; ``visit`` sees each commit there (implies it)."""
        states_only = states_only or visit is not None
        log_key = self.key(table_id, "log")
        entries = await self.redis.xrange(log_key, f"({max(after_seq, 0)}-0", "+", count=limit)
        if not entries:
            return []
        if b"rec" in entries[0][1] or (previous is not None and previous.seq == after_seq):
            return _rebuilt(entries, previous, states_only=states_only, visit=visit)
        before = await self._back_to_snapshot(log_key, after_seq)
        return _rebuilt(before + entries, None, skip=len(before), states_only=states_only, visit=visit)

    async def _back_to_snapshot(self, log_key: str, seq: int) -> list[tuple[bytes, dict[bytes, bytes]]]:
        """The log entries from the newest snapshot at or before ``seq`` through ``seq``, oldest
        first (one read: a snapshot is at most SNAPSHOT_EVERY entries back)."""
        found: list[tuple[bytes, dict[bytes, bytes]]] = []
        high = f"{seq}-0"
        while True:
            entries = await self.redis.xrevrange(log_key, high, "-", count=SNAPSHOT_EVERY)
            for index, (_id, fields) in enumerate(entries):
                if b"rec" in fields:
                    return (found + entries[:index + 1])[::-1]
            if len(entries) < SNAPSHOT_EVERY:
                raise LookupError(f"the log {log_key!r} has no snapshot at or before {seq}")
            found += entries
            high = f"({entries[-1][0].decode()}"

    async def log_back(self, table_id: str, before_seq: int,
                       count: int) -> list[tuple[int, CommitRecord | None]]:
        """Up to ``count`` log entries with seq <= before_seq, newest first, as (seq, the
        snapshot's record, or None for an entry that is not a snapshot)."""
        entries = await self.redis.xrevrange(self.key(table_id, "log"), f"{before_seq}-0", "-",
                                             count=count)
        return [(int(entry_id.split(b"-")[0]),
                 CommitRecord.decode(fields[b"rec"]) if b"rec" in fields else None)
                for entry_id, fields in entries]

    async def answer(self, table_id: str, act_key: str) -> dict[str, Any] | None:
        """The stored answer to an action id, if it was already handled."""
        raw = await self.redis.hget(self.key(table_id, "acts"), act_key)
        return None if raw is None else dict(orjson.loads(raw))


def _rebuilt(entries: list[tuple[bytes, dict[bytes, bytes]]], previous: CommitRecord | None,
             skip: int = 0, states_only: bool = False,
             visit: Callable[[CommitRecord], None] | None = None) -> list[CommitRecord]:
    """The whole commits of consecutive log entries but the first ``skip`` (read only to rebuild the
    others); the first entry is a snapshot unless ``previous``, the commit before it, is given.
    ``states_only`` as in :meth:`TableLog.log_after`, never for the caller's own ``previous``."""
    records = []
    for index, (entry_id, fields) in enumerate(entries):
        snapshot = fields.get(b"rec")
        if snapshot is not None:
            previous = CommitRecord.decode(snapshot)
        elif previous is None:
            raise LookupError(f"log entry {entry_id.decode()} has no snapshot before it")
        else:  # an entry only read to rebuild from is nobody else's: its engine is taken over
            previous = replay(previous, fields[b"act"], discard_previous=0 < index <= skip,
                              states_only=states_only and index > skip)
        if index >= skip:
            records.append(previous)
            if visit is not None:
                visit(previous)
    return records

"""Lobby tables in Redis: one JSON document per table, changed by compare-and-set.

The document lives beside the table's game keys (same shard hash tag,
so one Redis Cluster slot holds a table; shared/infra/shards.py). A change reads the newest document,
applies a pure model method and writes it back only if nobody wrote in between
(a Lua check of the version); otherwise it runs again on the newer copy. The
per-game indexes that ListTables reads are maintained beside it, best effort:
listing skips and prunes ids whose document is gone.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TypeVar

from services.lobby.model import LobbyTable, Status
from shared.errors import Busy, NotFound
from shared.ids import check_table_id
from shared.infra.runtime import Runtime

T = TypeVar("T")

#: A table document outlives its last change by this long.
TABLE_TTL_MS = 7 * 86_400 * 1000
MAX_ATTEMPTS = 50
#: ListTables reads at most this many index entries per call.
MAX_SCAN = 2000
_PAGE = 100
ALL_GAMES = "all"

_SAVE = """
-- KEYS: doc; ARGV: expected version, document ('' deletes), ttl_ms
local cur = tonumber(redis.call('HGET', KEYS[1], 'v') or '0')
if cur ~= tonumber(ARGV[1]) then return 0 end
if ARGV[2] == '' then
  redis.call('DEL', KEYS[1])
  return 1
end
redis.call('HSET', KEYS[1], 'v', cur + 1, 'doc', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
"""


class TableRepository:
    """Reads, creates, changes and lists the lobby tables of one deployment."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.redis = runtime.redis
        self._save = self.redis.register_script(_SAVE)

    def key(self, table_id: str) -> str:
        """The table's lobby document; shares the hash tag of the table's game keys."""
        return self.runtime.table_key(table_id, "lobby")

    def index_key(self, game: str) -> str:
        """Table ids of one game (or ``all``) by creation time."""
        return self.runtime.key("lobby", "tables", game)

    async def get(self, table_id: str) -> LobbyTable:
        """The newest copy; NotFound for unknown (or closed) tables."""
        found = await self._load(table_id)
        if found is None:
            raise NotFound(f"table {table_id!r}")
        return found

    async def _load(self, table_id: str) -> LobbyTable | None:
        version, doc = await self.redis.hmget(self.key(check_table_id(table_id)), ["v", "doc"])
        return None if doc is None else _decode(version, doc)

    async def add(self, table: LobbyTable) -> LobbyTable:
        """Store a new table and list it (a private table is never listed)."""
        if not await self._write(table, expected=0):
            raise Busy(f"table id {table.table_id!r} is taken; retry")
        table.version = 1
        if table.private:
            return table
        async with self.redis.pipeline(transaction=False) as pipe:
            for game in (table.game, ALL_GAMES):
                pipe.zadd(self.index_key(game), {table.table_id: table.created_at})
            await pipe.execute()
        return table

    async def change(self, table_id: str, fn: Callable[[LobbyTable], T]) -> tuple[LobbyTable, T]:
        """Apply ``fn`` to the newest copy and store it atomically; returns the copy and fn's result.

        ``fn`` raises to refuse (nothing is stored); a table it marks closed is deleted.
        """
        for _attempt in range(MAX_ATTEMPTS):
            table = await self.get(table_id)
            result = fn(table)
            if await self._write(table, expected=table.version):
                table.version += 1
                if table.closed:
                    await self._unlist(table)
                return table, result
        raise Busy(f"table {table_id!r} is busy; retry")

    async def _write(self, table: LobbyTable, expected: int) -> bool:
        document = "" if table.closed else json.dumps(
            {**table.to_dict(), "version": expected + 1}, separators=(",", ":"))
        saved = await self._save(keys=[self.key(table.table_id)],
                                 args=[expected, document, TABLE_TTL_MS])
        if saved:
            await self.runtime.replicas.after(self.key(table.table_id))
        return bool(saved)

    async def _unlist(self, table: LobbyTable) -> None:
        async with self.redis.pipeline(transaction=False) as pipe:
            for game in (table.game, ALL_GAMES):
                pipe.zrem(self.index_key(game), table.table_id)
            await pipe.execute()

    async def list(self, game: str | None, open_only: bool, limit: int) -> list[LobbyTable]:
        """Newest tables first, of one game or all; ``open_only`` keeps tables one can sit at now."""
        index = self.index_key(game or ALL_GAMES)
        found: list[LobbyTable] = []
        start = scanned = 0
        while scanned < MAX_SCAN and len(found) < limit:
            ids = [raw.decode() for raw in await self.redis.zrevrange(index, start, start + _PAGE - 1)]
            if not ids:
                break
            scanned += len(ids)
            async with self.redis.pipeline(transaction=False) as pipe:
                for table_id in ids:
                    pipe.hmget(self.key(table_id), ["v", "doc"])
                rows = await pipe.execute()
            gone = [table_id for table_id, (_v, doc) in zip(ids, rows, strict=True) if doc is None]
            tables = [_decode(version, doc) for version, doc in rows if doc is not None]
            found += [table for table in tables
                      if not open_only or (table.has_open_seat and table.status != Status.PLAYING)]
            if gone:
                await self.redis.zrem(index, *gone)
            start += len(ids) - len(gone)
        return found[:limit]


def _decode(version: bytes, doc: bytes) -> LobbyTable:
    table = LobbyTable.from_dict(json.loads(doc))
    table.version = int(version)
    return table

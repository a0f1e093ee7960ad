"""Who is watching a table right now: the players with an open Subscribe or Play stream to it.

Each process counts its own open streams and writes them to the table's ``watchers`` hash
(field "player|process", value: until when), at once when a stream opens and every
REFRESH_SECONDS while it stays open; a closed stream's field is removed. A process that dies
leaves fields that simply expire (TTL_SECONDS). The clubs service reads it to push "your turn"
only to players who are not looking at the table.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections import Counter
from collections.abc import Coroutine
from typing import Any

from shared.infra.runtime import Runtime
from shared.infra.tasks import poll_forever
from shared.obs.logs import get_logger

log = get_logger("watchers")

TTL_SECONDS = 60.0
REFRESH_SECONDS = 20.0


class Watchers:
    """This process's open streams by (table, player), mirrored to Redis."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.process = uuid.uuid4().hex[:12]
        self._open: Counter[tuple[str, str]] = Counter()
        self._writes: set[asyncio.Task[object]] = set()

    def key(self, table_id: str) -> str:
        """The table's watchers hash (in the table's slot)."""
        return self.runtime.table_key(table_id, "watchers")

    def opened(self, table_id: str, player_id: str) -> None:
        """A stream of the player to the table opened (written at once, in the background: the
        stream does not wait for it, and a stream cancelled at once is still counted right)."""
        self._open[(table_id, player_id)] += 1
        self._background(self._write([(table_id, player_id)]))

    def closed(self, table_id: str, player_id: str) -> None:
        """One of the player's streams to the table closed. Not awaited: a stream closes while
        being cancelled, and the removal must still happen."""
        pair = (table_id, player_id)
        self._open[pair] -= 1
        if self._open[pair] <= 0:
            del self._open[pair]
            self._background(self.runtime.redis.hdel(self.key(table_id), f"{player_id}|{self.process}"))

    def _background(self, work: Coroutine[Any, Any, object]) -> None:
        task: asyncio.Task[object] = asyncio.create_task(work)
        self._writes.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[object]) -> None:
        self._writes.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.warning("watchers_write_failed", error=repr(task.exception()))

    async def _write(self, pairs: list[tuple[str, str]]) -> None:
        until = time.time() + TTL_SECONDS
        async with self.runtime.redis.pipeline(transaction=False) as pipe:
            for table_id, player_id in pairs:
                pipe.hset(self.key(table_id), f"{player_id}|{self.process}", until)
                pipe.expire(self.key(table_id), int(TTL_SECONDS) * 2)
            await pipe.execute()

    async def refresh_once(self) -> bool:
        """Write every open stream again; False: wait for the next round."""
        pairs = list(self._open)
        if pairs:
            await self._write(pairs)
        return False

    async def refresh_forever(self) -> None:
        """Keep this process's entries alive until cancelled."""
        await poll_forever(self.refresh_once, REFRESH_SECONDS, log, "watchers_refresh_failed")


async def is_watching(runtime: Runtime, table_id: str, player_id: str) -> bool:
    """Whether any process has an open stream of the player to the table."""
    fields = await runtime.redis.hgetall(runtime.table_key(table_id, "watchers"))
    now = time.time()
    return any(name.decode().partition("|")[0] == player_id and float(until) > now
               for name, until in fields.items())

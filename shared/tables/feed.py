"""Per-process fan-out of a table's commits to the streams open in this process.

One NATS subscription per table, shared by all local streams of that table;
each stream gets its own bounded queue. A stream that falls behind or misses
a message reads the gap from the Redis log, so delivery is gap-free anyway.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

from nats.aio.msg import Msg

from shared.runtime import Runtime
from shared.tables.announce import live_subject
from shared.tables.records import CommitRecord
from shared.tables.store import TableStore

QUEUE_SIZE = 256
#: Commits read from the log per round trip while a stream catches up.
LOG_PAGE = 1000
#: With no news for this long, a stream checks the log itself (heals lost messages).
IDLE_CHECK_SECONDS = 2.0


class TableFeeds:
    """Shared NATS subscriptions of this process, keyed by table."""

    def __init__(self, runtime: Runtime, store: TableStore) -> None:
        self.runtime = runtime
        self.store = store
        self._queues: dict[str, set[asyncio.Queue[CommitRecord]]] = {}
        self._subs: dict[str, Any] = {}
        self._lock = asyncio.Lock()

    @contextlib.asynccontextmanager
    async def _watch(self, table_id: str) -> AsyncIterator[asyncio.Queue[CommitRecord]]:
        queue: asyncio.Queue[CommitRecord] = asyncio.Queue(QUEUE_SIZE)
        async with self._lock:
            if table_id not in self._subs:
                self._queues[table_id] = set()
                self._subs[table_id] = await self.runtime.nats.subscribe(
                    live_subject(self.runtime, table_id), cb=self._deliver(table_id))
            self._queues[table_id].add(queue)
        try:
            yield queue
        finally:
            async with self._lock:
                self._queues[table_id].discard(queue)
                if not self._queues[table_id]:
                    del self._queues[table_id]
                    with contextlib.suppress(Exception):
                        await self._subs.pop(table_id).unsubscribe()

    def _deliver(self, table_id: str) -> Any:
        async def callback(msg: Msg) -> None:
            record = self.store.known(table_id, msg.data)  # this process's own commits: no decode
            for queue in self._queues.get(table_id, ()):
                with contextlib.suppress(asyncio.QueueFull):
                    queue.put_nowait(record)  # a full queue heals from the log
        return callback

    async def commits(self, table_id: str, after_seq: int) -> AsyncGenerator[CommitRecord, None]:
        """Every commit with seq > after_seq, in order, forever: the log first, then live."""
        async with self._watch(table_id) as queue:
            last = after_seq
            previous: CommitRecord | None = None  # the commit ``last``, once this feed has it
            read_log = True
            while True:
                if read_log:
                    page = await self.store.log_after(table_id, last, LOG_PAGE, previous)
                    for record in page:
                        yield record
                        last, previous = record.seq, record
                    if len(page) == LOG_PAGE:
                        continue  # more of the log waits: read on instead of waiting for news
                try:
                    # asyncio.timeout, not wait_for: Python 3.11's wait_for returns the result
                    # instead of raising when a cancellation arrives together with it, and the
                    # stream of a vanished client would run on (sending into a dead call) forever.
                    async with asyncio.timeout(IDLE_CHECK_SECONDS):
                        record = await queue.get()
                except TimeoutError:
                    read_log = True
                    continue
                read_log = record.seq > last + 1
                if record.seq == last + 1:
                    yield record
                    last, previous = record.seq, record

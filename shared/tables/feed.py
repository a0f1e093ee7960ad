"""Per-process fan-out of a table's commits to the streams open in this process.

One NATS subscription per table (commits of other processes) and one listener
for this process's own commits, shared by all local streams of that table;
each stream gets its own bounded queue. A stream that falls behind or misses
a message reads the gap from the Redis log, so delivery is gap-free anyway.
A stream that heard nothing for a while also checks the log (a lost last
message has no later one to show the gap): one timer of the process marks
the queues that stayed quiet, instead of a timeout around every read.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import Any

from nats.aio.msg import Msg

from shared.runtime import Runtime
from shared.tables.announce import live_subject
from shared.tables.records import CommitRecord
from shared.tables.store import TableStore

QUEUE_SIZE = 256
#: Commits read from the log per round trip while a stream catches up.
LOG_PAGE = 1000
#: With no news for this long (up to twice as long), a stream checks the log itself.
IDLE_CHECK_SECONDS = 2.0
#: What the timer puts into a quiet stream's queue: "look at the log".
CHECK_LOG = None


class TableFeeds:
    """Shared NATS subscriptions of this process, keyed by table."""

    def __init__(self, runtime: Runtime, store: TableStore) -> None:
        self.runtime = runtime
        self.store = store
        self._queues: dict[str, set[asyncio.Queue[CommitRecord | None]]] = {}
        self._subs: dict[str, Any] = {}
        self._lock = asyncio.Lock()
        #: Queues that got news since the timer last looked.
        self._heard: set[asyncio.Queue[CommitRecord | None]] = set()
        self._timer: asyncio.Task[None] | None = None

    @contextlib.asynccontextmanager
    async def _watch(self, table_id: str) -> AsyncIterator[asyncio.Queue[CommitRecord | None]]:
        queue: asyncio.Queue[CommitRecord | None] = asyncio.Queue(QUEUE_SIZE)
        async with self._lock:
            if table_id not in self._subs:
                self._queues[table_id] = set()
                self._subs[table_id] = await self.runtime.live.subscribe(
                    live_subject(self.runtime, table_id), cb=self._deliver(table_id))
                self.runtime.local_commits.listen(table_id, self._put)
            self._queues[table_id].add(queue)
            if self._timer is None:
                self._timer = asyncio.create_task(self._mark_quiet_queues(), name="feed-idle-check")
        try:
            yield queue
        finally:
            self._heard.discard(queue)
            async with self._lock:
                self._queues[table_id].discard(queue)
                if not self._queues[table_id]:
                    del self._queues[table_id]
                    self.runtime.local_commits.forget(table_id, self._put)
                    with contextlib.suppress(Exception):
                        await self._subs.pop(table_id).unsubscribe()

    async def _mark_quiet_queues(self) -> None:
        """Every IDLE_CHECK_SECONDS, tell each stream that heard nothing since to check the log;
        ends once no stream is open (the next one starts it again)."""
        while True:
            await asyncio.sleep(IDLE_CHECK_SECONDS)
            if not self._queues:
                self._timer = None
                return
            for queues in self._queues.values():
                for queue in queues:
                    if queue not in self._heard:
                        with contextlib.suppress(asyncio.QueueFull):
                            queue.put_nowait(CHECK_LOG)
            self._heard.clear()

    def _deliver(self, table_id: str) -> Any:
        async def callback(msg: Msg) -> None:
            # Another process's commit; known() spares a decode when this process read it already.
            self._put(self.store.known(table_id, msg.data))
        return callback

    def _put(self, record: CommitRecord) -> None:
        """One commit to every local stream of its table."""
        for queue in self._queues.get(record.meta.table_id, ()):
            self._heard.add(queue)
            with contextlib.suppress(asyncio.QueueFull):
                queue.put_nowait(record)  # a full queue heals from the log

    async def commits(self, table_id: str, after_seq: int) -> AsyncGenerator[CommitRecord, None]:
        """Every commit with seq > after_seq, in order, forever: the log first, then live."""
        async with contextlib.aclosing(self.runs(table_id, after_seq)) as runs:
            async for run in runs:
                for record in run:
                    yield record

    async def runs(self, table_id: str, after_seq: int,
                   visit: Callable[[CommitRecord], None] | None = None,
                   ) -> AsyncGenerator[list[CommitRecord], None]:
        """:meth:`commits` a run at a time: a page of the log while the stream catches up (so
        its reader may send them together), then each live commit alone. ``visit`` sees each
        commit of a log page while one engine goes through the page (TableStore.log_after):
        the reader makes its views there instead of an engine copy per commit."""
        async with self._watch(table_id) as queue:
            last = after_seq
            previous: CommitRecord | None = None  # the commit ``last``, once this feed has it
            read_log = True
            while True:
                if read_log:
                    page = await self.store.log_after(table_id, last, LOG_PAGE, previous, visit=visit)
                    if page:
                        yield page
                        last, previous = page[-1].seq, page[-1]
                    if len(page) == LOG_PAGE:
                        continue  # more of the log waits: read on instead of waiting for news
                news = await queue.get()
                if news is CHECK_LOG:
                    read_log = True
                    continue
                record = news
                read_log = record.seq > last + 1
                if record.seq == last + 1:
                    yield [record]
                    last, previous = record.seq, record

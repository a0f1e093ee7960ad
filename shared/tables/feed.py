"""Per-process fan-out of a table's commits to the streams open in this process.

One NATS subscription per table (commits of other processes) and one listener
for this process's own commits, shared by all local streams of that table;
each stream gets its own bounded queue. A stream that falls behind or misses
a message reads the gap from the Redis log, so delivery is gap-free anyway.
A stream that heard nothing for a while may have missed the last message,
which has no later one to show the gap: one timer of the process (instead
of a timeout around every read) asks Redis for the newest seq of every
table with quiet streams, all in one round trip, and tells only the streams
behind it to read the log. Reading the log for every quiet stream cost a
Redis call per stream every few seconds: with players thinking, most of a
tournament's streams are quiet most of the time.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import Any

from nats.aio.msg import Msg

from shared.infra.runtime import Runtime
from shared.obs.logs import get_logger
from shared.tables.announce import live_subject
from shared.tables.records import CommitRecord
from shared.tables.store import TableStore

log = get_logger("feed")

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
        #: Per table, the queue of each local stream and the seat of its reader (None: none).
        self._queues: dict[str, dict[asyncio.Queue[CommitRecord | None], int | None]] = {}
        self._subs: dict[str, Any] = {}
        self._lock = asyncio.Lock()
        #: Queues that got news since the timer last looked.
        self._heard: set[asyncio.Queue[CommitRecord | None]] = set()
        #: Per queue, the newest seq its reader has (handed to it live, or read from the log).
        self._newest: dict[asyncio.Queue[CommitRecord | None], int] = {}
        self._timer: asyncio.Task[None] | None = None

    @contextlib.asynccontextmanager
    async def _watch(self, table_id: str,
                     seat: int | None) -> AsyncIterator[asyncio.Queue[CommitRecord | None]]:
        queue: asyncio.Queue[CommitRecord | None] = asyncio.Queue(QUEUE_SIZE)
        async with self._lock:
            if table_id not in self._subs:
                self._queues[table_id] = {}
                self._subs[table_id] = await self.runtime.live.subscribe(
                    live_subject(self.runtime, table_id), cb=self._deliver(table_id))
                self.runtime.local_commits.listen(table_id, self._put)
            self._queues[table_id][queue] = seat
            if self._timer is None:
                self._timer = asyncio.create_task(self._mark_quiet_queues(), name="feed-idle-check")
        try:
            yield queue
        finally:
            self._heard.discard(queue)
            self._newest.pop(queue, None)
            async with self._lock:
                self._queues[table_id].pop(queue, None)
                if not self._queues[table_id]:
                    del self._queues[table_id]
                    self.runtime.local_commits.forget(table_id, self._put)
                    with contextlib.suppress(Exception):
                        await self._subs.pop(table_id).unsubscribe()

    async def _mark_quiet_queues(self) -> None:
        """Every IDLE_CHECK_SECONDS, tell each stream that heard nothing since and is behind its
        table's head to check the log; ends once no stream is open (the next one starts it
        again)."""
        while True:
            await asyncio.sleep(IDLE_CHECK_SECONDS)
            if not self._queues:
                self._timer = None
                return
            quiet = {table_id: [queue for queue in queues if queue not in self._heard]
                     for table_id, queues in self._queues.items()}
            self._heard.clear()
            await self._wake_behind({table_id: queues for table_id, queues in quiet.items() if queues})

    async def _wake_behind(self, quiet: dict[str, list[asyncio.Queue[CommitRecord | None]]]) -> None:
        """Tell the quiet queues whose reader is behind its table's head to read the log."""
        if not quiet:
            return
        try:
            heads = await self.store.head_seqs(list(quiet))
        except Exception as exc:  # noqa: BLE001 - the timer must outlive an unreachable Redis
            log.warning("idle_check_failed", tables=len(quiet), error=repr(exc))
            return
        for queues, head in zip(quiet.values(), heads, strict=True):
            for queue in queues:
                if head > self._newest.get(queue, 0):
                    with contextlib.suppress(asyncio.QueueFull):
                        queue.put_nowait(CHECK_LOG)

    def _reached(self, queue: asyncio.Queue[CommitRecord | None], seq: int) -> None:
        """The reader of ``queue`` has (or will have) every commit through ``seq``."""
        self._newest[queue] = max(self._newest.get(queue, 0), seq)

    def _deliver(self, table_id: str) -> Any:
        async def callback(msg: Msg) -> None:
            # Another process's commit; known() spares a decode when this process read it already.
            self._put(self.store.known(table_id, msg.data))
        return callback

    def _put(self, record: CommitRecord) -> None:
        """One commit to every local stream of its table: first to the streams of the seat that
        made it, whose answer rides on its update (the others' queues are woken after it, so
        the actor's update is made and written first)."""
        queues = self._queues.get(record.meta.table_id)
        if not queues:
            return
        actor = record.actor
        if actor is not None:
            for queue, seat in queues.items():
                if seat == actor:
                    self._hand(queue, record)
        for queue, seat in queues.items():
            if seat != actor or actor is None:
                self._hand(queue, record)

    def _hand(self, queue: asyncio.Queue[CommitRecord | None], record: CommitRecord) -> None:
        with contextlib.suppress(asyncio.QueueFull):  # a full queue heals from the log
            queue.put_nowait(record)
            self._heard.add(queue)
            self._reached(queue, record.seq)

    async def commits(self, table_id: str, after_seq: int,
                      seat: int | None = None) -> AsyncGenerator[CommitRecord, None]:
        """Every commit with seq > after_seq, in order, forever: the log first, then live
        (``seat``: the reader's, as in :meth:`runs`)."""
        async with contextlib.aclosing(self.runs(table_id, after_seq, seat=seat)) as runs:
            async for run in runs:
                for record in run:
                    yield record

    async def runs(self, table_id: str, after_seq: int,
                   visit: Callable[[CommitRecord], None] | None = None, states_only: bool = False,
                   seat: int | None = None) -> AsyncGenerator[list[CommitRecord], None]:
        """:meth:`commits` a run at a time: a log page while catching up, then each live commit alone.
        ``visit``/``states_only`` as in TableStore.log_after (views made while one engine walks the
        page); ``seat``: the reader's seat, whose own commits reach it before other streams."""
        async with self._watch(table_id, seat) as queue:
            last = after_seq
            previous: CommitRecord | None = None  # the commit ``last``, once this feed has it
            read_log = True
            while True:
                if read_log:
                    page = await self.store.log_after(table_id, last, LOG_PAGE, previous, states_only,
                                                     visit=visit)
                    if page:
                        last, previous = page[-1].seq, page[-1]
                        self._reached(queue, last)
                        yield page
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

"""One reader per tournament and process for the history stream, shared by every watcher.

Two hundred players watching one tournament must not hold two hundred Redis
connections in blocking reads: each process polls a tournament's history once
per interval while anyone watches it, keeps the entries in memory with the
document and results read after them, and wakes the watchers. (The history is
small: a few entries per game.)
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from services.tournament.core.standings import GameResult
from services.tournament.model import Entry, Tournament
from services.tournament.store import TournamentStore
from shared.infra.tasks import poll_forever
from shared.obs.logs import get_logger

log = get_logger("tournament.watchers")

#: How often a watched tournament's history is polled.
POLL_SECONDS = 0.2
#: History entries read at most per poll.
PAGE = 1000


class _Tail:
    """The history of one tournament as far as read, and who waits for more."""

    def __init__(self) -> None:
        self.entries: list[tuple[int, Entry]] = []
        #: The document and the recorded results, read after the last entries.
        self.snapshot: tuple[Tournament, list[GameResult]] | None = None
        self.changed = asyncio.Condition()
        self.watchers = 0
        self.task: asyncio.Task[None] | None = None


class TournamentWatchers:
    """Shared tails of the tournaments watched through this process."""

    def __init__(self, store: TournamentStore) -> None:
        self.store = store
        self._tails: dict[str, _Tail] = {}

    async def _read(self, tournament_id: str, tail: _Tail) -> bool:
        """Read what is new; True while a full page came (more may be waiting)."""
        after = tail.entries[-1][0] if tail.entries else 0
        found = await self.store.history(tournament_id, after, count=PAGE)
        if found:
            snapshot = (await self.store.get(tournament_id),
                        [result for result, _extra in await self.store.results(tournament_id)])
            async with tail.changed:
                tail.entries.extend(found)
                tail.snapshot = snapshot
                tail.changed.notify_all()
        return len(found) == PAGE

    @contextlib.asynccontextmanager
    async def _watching(self, tournament_id: str) -> AsyncIterator[_Tail]:
        tail = self._tails.setdefault(tournament_id, _Tail())
        tail.watchers += 1
        if tail.task is None:
            tail.task = asyncio.create_task(
                poll_forever(lambda: self._read(tournament_id, tail), POLL_SECONDS, log,
                             "history_poll_failed"), name=f"watchers:{tournament_id}")
        try:
            yield tail
        finally:
            tail.watchers -= 1
            if not tail.watchers:
                tail.task.cancel()
                del self._tails[tournament_id]

    async def entries(self, tournament_id: str) -> AsyncIterator[
            tuple[list[tuple[int, Entry]], Tournament, list[GameResult]]]:
        """Batches of history entries from the first, as they are read, each with the document
        and results read after it; never ends by itself."""
        async with self._watching(tournament_id) as tail:
            sent = 0
            while True:
                async with tail.changed:
                    await tail.changed.wait_for(lambda seen=sent: len(tail.entries) > seen)  # type: ignore[misc]
                    batch = tail.entries[sent:]
                    snapshot = tail.snapshot
                sent += len(batch)
                assert snapshot is not None  # set with the first entries
                yield batch, *snapshot

    async def close(self) -> None:
        """Stop every poller."""
        for tail in self._tails.values():
            if tail.task is not None:
                tail.task.cancel()
        self._tails.clear()

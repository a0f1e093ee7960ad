"""One reader per tournament and process for the history stream, shared by every watcher.

Two hundred players watching one tournament must not hold two hundred Redis
connections in blocking reads: each process polls a tournament's history once
per interval while anyone watches it, replays the entries into one shared
:class:`~services.tournament.news.Replay` (each entry's response is built once
for every watcher), and wakes the watchers. (The history is small: a few
entries per game.)
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from services.tournament.news import Replay
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
        self.replay = Replay()
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
        moments = tail.replay.moments
        found = await self.store.history(tournament_id, moments[-1].seq if moments else 0, count=PAGE)
        if found:
            tournament = await self.store.get(tournament_id)
            results = [result for result, _extra in await self.store.results(tournament_id)]
            async with tail.changed:
                tail.replay.add(found, tournament, results)
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

    async def news(self, tournament_id: str) -> AsyncIterator[tuple[Replay, range]]:
        """The tournament's replay with the indexes of its moments not yet yielded, from the
        first, as they are read; never ends by itself."""
        async with self._watching(tournament_id) as tail:
            sent = 0
            while True:
                async with tail.changed:
                    await tail.changed.wait_for(
                        lambda seen=sent: len(tail.replay.moments) > seen)  # type: ignore[misc]
                    ready = len(tail.replay.moments)
                yield tail.replay, range(sent, ready)
                sent = ready

    async def close(self) -> None:
        """Stop every poller."""
        for tail in self._tails.values():
            if tail.task is not None:
                tail.task.cancel()
        self._tails.clear()

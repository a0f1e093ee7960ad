"""The page's live news: one snapshot per tournament and batch of history entries, shared by
every viewer of this process (built once per entry batch, never per viewer).

A feed follows :meth:`TournamentWatchers.news` (the history WatchTournament replays); after
each batch of entries it builds the tournament as it is now (document, rounds, standings with
tie-break values) as one server-sent event, which every viewer's stream writes as it is.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

from google.protobuf.json_format import MessageToDict

from services.tournament import convert
from services.tournament.model import Tournament
from services.tournament.store import TournamentStore
from services.tournament.watchers import TournamentWatchers
from shared.infra.runtime import UNREACHABLE
from shared.obs.logs import get_logger

log = get_logger("tournament.feed")


async def snapshot(store: TournamentStore, tournament_id: str) -> dict[str, Any]:
    """The tournament now, as the page shows it (GetTournament and GetStandings in one)."""
    tournament = await store.get(tournament_id)
    recorded = [result for result, _extra in await store.results(tournament_id)]
    return snapshot_of(tournament, recorded)


def snapshot_of(tournament: Tournament, recorded: list[Any]) -> dict[str, Any]:
    """:func:`snapshot` of a document and its results already read."""
    return {"tournament": _dict(convert.tournament_proto(tournament, recorded)),
            "standings": [_dict(line) for line in convert.standings_proto(tournament, recorded)],
            "server_time": time.time()}


def _dict(message: Any) -> dict[str, Any]:
    return MessageToDict(message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True)


class _Feed:
    """The newest event of one tournament and who waits for the next."""

    def __init__(self) -> None:
        self.event = b""
        self.count = 0
        self.changed = asyncio.Condition()
        self.viewers = 0
        self.task: asyncio.Task[None] | None = None


class PageFeeds:
    """One feed per watched tournament of this process."""

    def __init__(self, store: TournamentStore, watchers: TournamentWatchers) -> None:
        self.store = store
        self.watchers = watchers
        self._feeds: dict[str, _Feed] = {}

    async def _follow(self, tournament_id: str, feed: _Feed) -> None:
        async for replay, indexes in self.watchers.news(tournament_id):
            last = replay.moments[indexes[-1]]
            try:
                state = await snapshot(self.store, tournament_id)
            except UNREACHABLE:  # Redis away for a moment: the next batch brings the news
                log.warning("page_snapshot_failed", tournament_id=tournament_id, exc_info=True)
                continue
            state["seq"], state["change"] = last.seq, str(last.entry["change"])
            data = json.dumps(state, separators=(",", ":"))
            async with feed.changed:
                feed.event = f"id: {last.seq}\nevent: state\ndata: {data}\n\n".encode()
                feed.count += 1
                feed.changed.notify_all()

    @contextlib.asynccontextmanager
    async def _viewing(self, tournament_id: str) -> AsyncIterator[_Feed]:
        feed = self._feeds.setdefault(tournament_id, _Feed())
        feed.viewers += 1
        if feed.task is None:
            feed.task = asyncio.create_task(self._follow(tournament_id, feed), name=f"feed:{tournament_id}")
        try:
            yield feed
        finally:
            feed.viewers -= 1
            if not feed.viewers:
                feed.task.cancel()
                self._feeds.pop(tournament_id, None)

    async def events(self, tournament_id: str, idle_seconds: float) -> AsyncGenerator[bytes | None, None]:
        """The newest event (as soon as there is one), then each next one, and None after each
        ``idle_seconds`` without one; never ends by itself (a viewer that falls behind skips to
        the newest: every event is the whole state)."""
        async with self._viewing(tournament_id) as feed:
            seen = 0
            while True:
                async with feed.changed:
                    try:
                        await asyncio.wait_for(feed.changed.wait_for(
                            lambda seen=seen: feed.count > seen), idle_seconds)  # type: ignore[misc]
                    except TimeoutError:
                        event = None
                    else:
                        seen, event = feed.count, feed.event
                yield event

    async def close(self) -> None:
        """Stop every feed."""
        for feed in self._feeds.values():
            if feed.task is not None:
                feed.task.cancel()
        self._feeds.clear()

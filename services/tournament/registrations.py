"""Registrations that arrive together are written together.

Each registration used to read, change and write the whole tournament document
under compare-and-set: with thousands of entrants registering in the same
seconds almost every write lost its race, retried with a longer wait and
re-read a document that grew with every entrant (quadratic, and at 2,000 some
calls ran out of time). Here the registrations of one tournament that wait in
this process are applied in one change (one history entry each, in one
atomic write) while the previous batch is being written; each caller gets its
own answer (registered, or its own refusal) and all share one reply built once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from services.tournament.model import Entry, Tournament
from services.tournament.store import TournamentStore
from shared.rpc.errors import ServiceError

#: Registrations applied at most in one write (bounds one write's size and a batch's wait).
MAX_BATCH = 500


@dataclass
class _Waiting:
    player_id: str
    name: str
    rating: float
    done: asyncio.Future[object] = field(default_factory=lambda: asyncio.get_running_loop().create_future())


class RegistrationBatches:
    """Per tournament, the registrations waiting for the next write, and its writer."""

    def __init__(self, store: TournamentStore,
                 reply: Callable[[Tournament], Awaitable[object]]) -> None:
        self.store = store
        self._reply = reply
        self._waiting: dict[str, list[_Waiting]] = {}
        self._writers: dict[str, asyncio.Task[None]] = {}

    async def register(self, tournament_id: str, player_id: str, name: str, rating: float) -> object:
        """Register the player with the next batch; the reply built from the document as written
        (raises the player's own refusal, or the write's error)."""
        waiting = _Waiting(player_id, name, rating)
        self._waiting.setdefault(tournament_id, []).append(waiting)
        if tournament_id not in self._writers:
            self._writers[tournament_id] = asyncio.create_task(self._write_all(tournament_id),
                                                               name=f"registrations:{tournament_id}")
        return await waiting.done

    async def _write_all(self, tournament_id: str) -> None:
        try:
            while self._waiting.get(tournament_id):
                queue = self._waiting[tournament_id]
                batch, self._waiting[tournament_id] = queue[:MAX_BATCH], queue[MAX_BATCH:]
                await self._write(tournament_id, batch)
        finally:
            self._waiting.pop(tournament_id, None)
            del self._writers[tournament_id]

    async def _write(self, tournament_id: str, batch: list[_Waiting]) -> None:
        refused: dict[int, ServiceError] = {}

        def register_all(tournament: Tournament) -> list[Entry]:
            refused.clear()  # a lost compare-and-set calls this again on a fresh copy
            outcomes = tournament.register_many([(w.player_id, w.name, w.rating) for w in batch])
            refused.update((index, outcome) for index, outcome in enumerate(outcomes)
                           if isinstance(outcome, ServiceError))
            return [outcome for outcome in outcomes if not isinstance(outcome, ServiceError)]

        try:
            tournament, _entries = await self.store.change_many(tournament_id, register_all)
            reply = await self._reply(tournament) if len(refused) < len(batch) else None
        except Exception as err:  # noqa: BLE001 - every caller of the batch gets the write's error
            for waiting in batch:
                if not waiting.done.done():
                    waiting.done.set_exception(err)
            return
        for index, waiting in enumerate(batch):
            if waiting.done.done():  # its caller went away
                continue
            if index in refused:
                waiting.done.set_exception(refused[index])
            else:
                waiting.done.set_result(reply)

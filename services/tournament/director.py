"""The director: moves each tournament on, one director per tournament at a time.

Every director process polls the active tournaments; for each it takes (or
renews) the tournament's lease and then does the next step. Every step is
idempotent and every write to the tournament is fenced by the lease (the
store's script refuses a director that lost it), so two replicas racing, or a
replacement for one killed mid-step, never seat a round twice:

registration -> (check-in) -> seat round k (silently) -> deal each table's
first game -> announce round k (its ``seated`` entry: every seated player's
table can be played at once) -> start each table's games until each has G
recorded results (at the time limit: bots play the running games
out, no new game starts) -> round k finished -> (manual rounds: wait for the
organizer's StartNextRound) -> ... -> finished.

The seating is computed from the document and the recorded results alone
(the pure core), so a director that redoes a step computes the same tables.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable

from services.tournament import notify
from services.tournament.core.rounds import finished, plan_round
from services.tournament.core.seating import SeatedTable
from services.tournament.model import Status, Tournament
from services.tournament.store import LeaseLost, TournamentStore
from services.tournament.tables import TournamentTables
from shared.infra.runtime import UNREACHABLE
from shared.infra.tasks import poll_forever
from shared.obs.logs import get_logger
from shared.obs.metrics import (
    TOURNAMENT_PLAYERS,
    TOURNAMENT_ROUND_DURATION,
    TOURNAMENT_ROUNDS,
    TOURNAMENT_TABLES_OPEN,
    TOURNAMENTS_RUNNING,
)

log = get_logger("tournament.director")

#: A director that stops renewing (killed, stuck) loses its tournaments after this long.
LEASE_SECONDS = 5.0
#: How often a director looks at its tournaments.
STEP_SECONDS = 0.2
#: Tables of one round a step works on at once (a round of 2,500 tables one after the other
#: took longer than the lease; all at once would flood Redis and the lobby with one burst).
TABLES_AT_ONCE = 64


async def each_table(count: int, work: Callable[[int], Awaitable[bool]]) -> list[bool]:
    """``work`` for table indexes 0..count-1, at most :data:`TABLES_AT_ONCE` at a time; the
    results in index order."""
    gate = asyncio.Semaphore(TABLES_AT_ONCE)

    async def one(index: int) -> bool:
        async with gate:
            return await work(index)

    return list(await asyncio.gather(*(one(index) for index in range(count))))


class Director:
    """Moves on every active tournament whose lease it holds."""

    def __init__(self, store: TournamentStore, tables: TournamentTables,
                 holder: str | None = None) -> None:
        self.store = store
        self.tables = tables
        self.holder = holder or uuid.uuid4().hex

    async def run_forever(self) -> None:
        """Step the tournaments until cancelled (through Redis or NATS outages)."""
        await poll_forever(self.run_once, STEP_SECONDS, log, "director_step_failed")

    async def run_once(self) -> None:
        """One step of every active tournament this director holds (or can take)."""
        running = players = open_tables = 0
        for tournament_id in await self.store.active():
            if not await self.store.hold(tournament_id, self.holder, LEASE_SECONDS):
                continue
            tournament = await self.store.get(tournament_id)
            try:
                open_tables += await self.step(tournament, time.time())
            except LeaseLost:
                log.info("lease_lost", tournament_id=tournament_id)
                continue
            if tournament.status in (Status.RUNNING, Status.PAUSED):
                running += 1
                players += sum(1 for p in tournament.players if p.last_round is None and not p.bot)
        TOURNAMENTS_RUNNING.set(running)
        TOURNAMENT_PLAYERS.set(players)
        TOURNAMENT_TABLES_OPEN.set(open_tables)

    async def stop(self) -> None:
        """Give up the leases held, so a successor need not wait for them to expire (with
        Redis away they simply expire)."""
        await self.tables.close()
        with contextlib.suppress(*UNREACHABLE):
            for tournament_id in await self.store.active():
                await self.store.release(tournament_id, self.holder)

    async def step(self, tournament: Tournament, now: float) -> int:
        """Do whatever the tournament needs next (nothing, if it waits for players or games);
        returns how many tables of its current round are still playing."""
        tid = tournament.tournament_id
        status = tournament.status
        if status == Status.REGISTRATION:
            start_at = tournament.settings.start_at
            if start_at and now >= start_at and tournament.players:
                await self.store.change(tid, lambda t: t.start(now), self.holder)
            elif start_at and now >= start_at - notify.SOON_SECONDS and not tournament.reminded:
                reminded, _entry = await self.store.change(tid, Tournament.remind, self.holder)
                await notify.starting_soon(self.store.runtime, reminded)
            return 0
        if status == Status.CHECK_IN:
            if now >= tournament.check_in_until:
                await self.store.change(tid, Tournament.close_check_in, self.holder)
            return 0
        if status not in (Status.RUNNING, Status.PAUSED):
            return 0
        if not tournament.rounds or tournament.rounds[-1].finished:
            await self._next_round(tournament, now)
            return 0
        if not tournament.rounds[-1].announced:
            return await self._announce_round(tournament)
        return await self._play_round(tournament, now)

    async def _announce_round(self, tournament: Tournament) -> int:
        """Deal the first game of every table of the round just seated; once each has its game,
        announce the seating (so no seated player is told of a table that is not there yet)."""
        current = tournament.rounds[-1]
        dealt = await each_table(len(current.tables),
                                 lambda index: self.tables.dealt(tournament, current, index))
        if all(dealt):
            number = current.number
            announced, _entry = await self.store.change(
                tournament.tournament_id, lambda t: t.announce_round(number, time.time()), self.holder)
            await notify.seated(self.store.runtime, announced, number)
            TOURNAMENT_ROUNDS.inc()
            log.info("round_announced", tournament_id=tournament.tournament_id, round=number)
        return len(dealt)

    async def _play_round(self, tournament: Tournament, now: float) -> int:
        tid = tournament.tournament_id
        current = tournament.rounds[-1]
        recorded = Counter(result.table for result, _extra in await self.store.results(tid)
                           if result.round == current.number)
        limit = tournament.settings.round_seconds
        if limit and not current.cut and now >= current.started_at + limit:
            number = current.number
            tournament, _ = await self.store.change(tid, lambda t: t.cut_round(number), self.holder)
            current = tournament.rounds[-1]
        done = await each_table(len(current.tables), lambda index: self.tables.advance(
            tournament, current, index, recorded[index]))
        if all(done):
            await self.store.change(tid, lambda t: t.finish_round(current.number), self.holder)
            TOURNAMENT_ROUND_DURATION.observe(now - current.started_at)
            log.info("round_finished", tournament_id=tid, round=current.number)
        return done.count(False)

    async def _next_round(self, tournament: Tournament, now: float) -> None:
        tid = tournament.tournament_id
        fmt = tournament.format()
        if finished(fmt, [r.seated() for r in tournament.rounds]):
            await self.store.change(tid, Tournament.finish, self.holder)
            log.info("tournament_finished", tournament_id=tid)
            return
        if tournament.status == Status.PAUSED or tournament.awaiting_next_round:
            return  # paused, or (manual rounds) waiting for the organizer's StartNextRound
        results = [result for result, _extra in await self.store.results(tid)]

        def plan(t: Tournament) -> list[SeatedTable]:
            return plan_round(t.format(), t.core_players(), [r.seated() for r in t.rounds], results)

        # A big field takes about a second to seat: off the event loop, on the copy just read;
        # planned again (in the loop) only if the document changed meanwhile.
        planned = await asyncio.to_thread(plan, tournament)

        def seat(t: Tournament) -> dict[str, object]:
            tables = planned if t.version == tournament.version else plan(t)
            if not any(table.players for table in tables):
                return t.finish()  # nobody left to seat
            return t.seat(len(t.rounds) + 1, tables, now)

        tournament, entry = await self.store.change(tid, seat, self.holder)
        log.info("round_seated", tournament_id=tid, change=entry.get("change", "seated_silently"),
                 round=len(tournament.rounds))

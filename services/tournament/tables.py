"""The director's hands at the tables: the lobby's own code creates, seats and starts them.

A tournament table is an ordinary lobby table with a deterministic id, so the
engine or arbiter plays it, players play their seats with the usual calls and
the lobby frees it between games. The director only ever does what is
idempotent there: create the table if it is missing, and start game k + 1 once
k games are recorded (the lobby's compare-and-set starts each game once,
whichever director asks).
"""

from __future__ import annotations

import asyncio
import dataclasses
import time

from services.lobby.model import STAND_IN_LEVEL, LobbyTable, Moved, SeatState, Status
from services.lobby.tables import Lobby
from services.tournament.model import Round, Tournament
from shared.errors import Refusal
from shared.games.base import derived_rng
from shared.games.catalog import entry
from shared.games.errors import RuleError
from shared.games.registry import bot_levels
from shared.obs.logs import get_logger
from shared.rpc.auth import Identity
from shared.rpc.errors import ServiceError
from shared.tables.records import CommitRecord
from shared.tables.store import Change, NothingToDo

log = get_logger("tournament.tables")

#: What the lobby's code refuses with (its storage's neutral refusals, its service's statuses).
REFUSED = (Refusal, ServiceError)
#: The option naming the seat that deals first.
FIRST_DEALER = "first_dealer"
#: Commits a play-out makes at most (a safety net far above any game's length).
MAX_PLAY_OUT = 20_000
#: A table marked playing without its game for this long lost its starter (see _heal_lost_start).
LOST_START_SECONDS = 5.0
#: A table seen playing its game is looked at again after this long (or once its result is in):
#: a round of thousands of tables otherwise cost two Redis reads per table every step.
PLAYING_RECHECK_SECONDS = 5.0


def dealer_option(game: str, number: int, seats: int) -> dict[str, int]:
    """The first dealer of a round's game ``number`` (1, 2, ...): seat 0, 1, ... in turn, for
    games that take the option and do not pass the deal on by themselves (``carried_over``)."""
    known = entry(game)
    takes = any(option.name == FIRST_DEALER for option in known.options)
    if not takes or FIRST_DEALER in known.carried_over:
        return {}
    return {FIRST_DEALER: (number - 1) % seats}


def bot_seat() -> SeatState:
    """A seat the tournament's bot plays (always ready)."""
    return SeatState(name=f"Bot ({STAND_IN_LEVEL})", ready=True, bot=STAND_IN_LEVEL)


class TournamentTables:
    """Creates, starts and (at the time limit) plays out the tables of tournaments."""

    def __init__(self, lobby: Lobby) -> None:
        self.lobby = lobby
        self.series = lobby.series
        self._playing_out: dict[str, asyncio.Task[None]] = {}
        #: (table id, game_no) -> when this director first saw it running without its game.
        self._lost_since: dict[tuple[str, int], float] = {}
        #: table id -> (results recorded, when) it was last seen playing its game.
        self._seen_playing: dict[str, tuple[int, float]] = {}

    def _seats_for(self, tournament: Tournament, seats: list[str],
                   current: list[SeatState]) -> list[SeatState]:
        """The lobby seats for the next game: people ready, bots where a bot plays or a player withdrew."""
        wanted = []
        for index, player_id in enumerate(seats):
            entrant = tournament.entrant(player_id) if player_id else None
            if entrant is None or entrant.last_round is not None:
                wanted.append(bot_seat())
                continue
            have = current[index] if index < len(current) else SeatState()
            if have.person and have.player_id == player_id:
                wanted.append(dataclasses.replace(have, ready=True))
            else:
                wanted.append(SeatState(player_id, entrant.name, ready=True))
        return wanted

    async def _ensure(self, tournament: Tournament, round_: Round, index: int) -> LobbyTable | None:
        """The round's lobby table, created if it never was; None once the lobby closed it."""
        table_id = tournament.table_id(round_.number, index)
        try:
            return await self.lobby.repo.get(table_id)
        except REFUSED:
            pass
        try:
            await self.series.store.head(table_id)
            return None  # it had a game, so it existed: the lobby closed it (shared/tables/README.md)
        except REFUSED:
            pass
        settings = tournament.settings
        table = LobbyTable(table_id, settings.game, dict(settings.options), settings.turn_seconds,
                           self._seats_for(tournament, round_.tables[index], []), time.time(),
                           tournament_id=tournament.tournament_id)
        try:
            return await self.lobby.repo.add(table)
        except REFUSED:  # another director created it a moment ago
            return await self.lobby.repo.get(table_id)

    async def advance(self, tournament: Tournament, round_: Round, index: int, recorded: int) -> bool:
        """Move one table on; True once it has played its games (or the round was cut and its
        last started game is recorded, or the lobby closed it as idle). ``recorded``: its games
        with a recorded result."""
        seats = round_.tables[index]
        games = tournament.settings.games_per_round
        table_id = tournament.table_id(round_.number, index)
        if recorded >= games or not any(seats):
            self._seen_playing.pop(table_id, None)
            return True
        seen = self._seen_playing.get(table_id)
        if (seen is not None and seen[0] == recorded and not round_.cut
                and time.monotonic() - seen[1] < PLAYING_RECHECK_SECONDS):
            return False  # still playing the game it played a moment ago
        table = await self._ensure(tournament, round_, index)
        if table is None:
            return True  # closed as idle: its unfinished game has no result
        if table.status == Status.PLAYING:
            if round_.cut:
                self._play_out(table.table_id)
            elif await self._heal_lost_start(table):
                self._seen_playing[table_id] = (recorded, time.monotonic())
            return False
        if table.games_played > recorded:
            return False  # the game ended; its result is on its way
        if round_.cut:
            return True
        await self._start(tournament, round_, index, table, recorded + 1)
        return False

    async def dealt(self, tournament: Tournament, round_: Round, index: int) -> bool:
        """Whether the table's first game of the round exists (a table of bots only never does:
        True), creating the table and starting that game when not."""
        if not any(round_.tables[index]):
            return True
        try:
            await self.series.store.head(tournament.table_id(round_.number, index))
            return True
        except REFUSED:
            pass
        await self.advance(tournament, round_, index, 0)
        return False

    async def _start(self, tournament: Tournament, round_: Round, index: int, table: LobbyTable,
                     game: int) -> None:
        def prepare(current: LobbyTable) -> None:
            if current.status == Status.PLAYING or current.games_played != game - 1:
                raise Moved
            current.seats = self._seats_for(tournament, round_.tables[index], current.seats)
            current.waiting = []
            current.options = {**current.options, **dealer_option(tournament.settings.game, game,
                                                                  len(current.seats))}

        try:
            table, _ = await self.lobby.repo.change(table.table_id, prepare)
            await self.series.start_if_ready(table, seed=tournament.game_seed(round_.number, index, game))
        except (Moved, *REFUSED) as err:  # started meanwhile: the next step sees it running
            log.info("tournament_start_skipped", table_id=table.table_id, game=game, reason=repr(err))
            return
        log.info("tournament_game_started", table_id=table.table_id, game=game)

    async def _heal_lost_start(self, table: LobbyTable) -> bool:
        """A starter that died between marking the game running and creating it left a table
        playing no game: mark it not running, so the next step starts the game again. True if
        the table plays its game."""
        try:
            head = await self.series.store.head(table.table_id)
            if head.meta.game_no >= table.games_played:
                return True
        except REFUSED:
            pass  # no game at all yet
        key = (table.table_id, table.games_played)
        first_seen = self._lost_since.setdefault(key, time.time())
        if time.time() - first_seen < LOST_START_SECONDS:
            return False  # a start may still be under way
        del self._lost_since[key]
        await self.lobby.repo.change(table.table_id, lambda t: t.undo_begin(table.games_played))
        log.warning("tournament_start_healed", table_id=table.table_id, game_no=table.games_played)
        return False

    async def leave(self, table_id: str, player_id: str, name: str) -> None:
        """A withdrawn player's seat: the lobby hands it to a bot (or the rules' leave)."""
        try:
            await self.lobby.leave(Identity(player_id, name, 0.0), table_id)
        except REFUSED as err:  # not created yet, or between games: the next game seats a bot
            log.info("tournament_leave_skipped", table_id=table_id, reason=err.message)

    # -- the time limit ---------------------------------------------------------------------------

    def _play_out(self, table_id: str) -> None:
        running = self._playing_out.get(table_id)
        if running is None or running.done():
            self._playing_out[table_id] = asyncio.create_task(self.play_out(table_id),
                                                              name=f"play-out:{table_id}")

    async def play_out(self, table_id: str) -> None:
        """Bots play every seat of the running game to its end at full speed. The seats keep their
        players (the result counts for them); a person acting meanwhile races the bots, and the table
        store orders the commits."""
        writer = self.series.writer

        def bot_move(head: CommitRecord | None) -> Change:
            if head is None:
                raise NothingToDo
            game = head.game()
            if game.over or not game.to_act():
                raise NothingToDo
            meta = dataclasses.replace(head.meta, bots={str(seat): STAND_IN_LEVEL
                                                        for seat in range(len(head.meta.players))})
            seat = game.to_act()[0]
            bot = bot_levels(meta.game)[STAND_IN_LEVEL]()
            action = bot.choose(game.view(seat), derived_rng(meta.seed, "play-out", head.seq, seat))
            return Change(game, game.apply(seat, action), meta, seat, action)

        for _move in range(MAX_PLAY_OUT):
            try:
                await writer.commit(table_id, bot_move)
            except NothingToDo:
                return
            except RuleError:
                await asyncio.sleep(0.01)

    async def close(self) -> None:
        """Stop play-outs in flight (another director finishes them)."""
        for task in self._playing_out.values():
            task.cancel()
        await asyncio.gather(*self._playing_out.values(), return_exceptions=True)
        self._playing_out.clear()

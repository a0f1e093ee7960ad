"""A table's series of games: starting each one, seats changing hands during it, its end.

The lobby document says who sits where; the game's own head in the table store
says who plays. Changes to a running game (a leaving player, a reclaimed seat,
table talk under the rules) are commits on the game's head, conditional on the
game number they were planned for, and announced like any other commit.
"""

from __future__ import annotations

import dataclasses
import secrets
from collections.abc import Callable
from typing import Any

from services.lobby.catalog import carried_over, has_leave_and_chat, new_game
from services.lobby.lifetime import TableLifetime
from services.lobby.model import STAND_IN_LEVEL, LobbyTable, Moved, Status
from services.lobby.news import TableNews
from services.lobby.store import TableRepository
from shared.archive.fairness import commitment, new_salt
from shared.errors import Refusal
from shared.games.base import Game
from shared.games.errors import RuleError
from shared.infra.runtime import Runtime
from shared.obs.logs import get_logger
from shared.rpc.errors import unavailable
from shared.tables.records import CommitRecord, TableMeta
from shared.tables.store import Change, NothingToDo
from shared.tables.writer import TableWriter

log = get_logger("lobby.series")

#: Edits a running game: (engine at the head, head) -> the change to commit.
GameEdit = Callable[[Game, CommitRecord], Change]


class GameSeries:
    """Starts, edits and finishes the games of lobby tables."""

    def __init__(self, runtime: Runtime, repo: TableRepository, news: TableNews,
                 lifetime: TableLifetime) -> None:
        self.repo = repo
        self.news = news
        self.lifetime = lifetime
        self.writer = TableWriter(runtime)
        self.store = self.writer.store

    # -- start ------------------------------------------------------------------------------

    async def start_if_ready(self, table: LobbyTable, seed: int | None = None) -> LobbyTable:
        """Start the next game when every seat is taken and ready; returns the newest table. ``seed``
        deals it (tournaments: the same seeds at every table); None deals a fresh random one."""
        if not table.startable():
            return table
        try:
            table, game_no = await self.repo.change(table.table_id, LobbyTable.begin_game)
        except Moved:
            return await self.repo.get(table.table_id)
        try:
            record = await self._create_game(table, secrets.randbits(62) if seed is None else seed)
        except Exception as err:
            await self.repo.change(table.table_id, lambda t: t.undo_begin(game_no))
            if isinstance(err, Refusal):
                raise
            raise unavailable("the game could not be started; get ready again") from err
        await self.lifetime.game_started(table.table_id)
        log.info("game_started", table_id=table.table_id, game_no=game_no, seq=record.seq)
        await self.news.tell(table, "game_started")
        await self.news.record(table, "started", players=record.meta.players, bots=record.meta.bots,
                               seq=record.seq)
        return table

    async def _create_game(self, table: LobbyTable, seed: int) -> CommitRecord:
        salt = new_salt()
        options = table.game_options()
        game = new_game(table.game, len(table.seats), options, seed)
        meta = TableMeta(
            table.table_id, table.game,
            players=[seat.player_id if seat.person else "" for seat in table.seats],
            bots={str(index): seat.bot for index, seat in enumerate(table.seats) if seat.bot},
            turn_seconds=table.turn_seconds, game_no=table.games_played, seed=seed, salt=salt,
            options=options)
        started = {"type": "game_started", "game_no": table.games_played, "options": options,
                   "turn_seconds": table.turn_seconds, "commitment": commitment(seed, salt),
                   "seats": [{"seat": index, "player_id": seat.player_id, "name": seat.name,
                              "bot": seat.bot or None} for index, seat in enumerate(table.seats)]}
        return await self.writer.create(meta, game, [started])

    # -- edits of the running game ---------------------------------------------------------------

    async def _edit(self, table: LobbyTable, seat: int, player_id: str, edit: GameEdit) -> bool:
        """Commit ``edit`` on the running game if it is still the game planned for and the seat
        still the player's; returns False when there was nothing to edit (``edit`` may raise
        NothingToDo too)."""

        def change(head: CommitRecord | None) -> Change:
            if (head is None or head.meta.game_no != table.games_played
                    or head.meta.players[seat] != player_id):
                raise NothingToDo
            game = head.game()
            if game.over or head.meta.closed:
                raise NothingToDo
            return edit(game, head)

        try:
            await self.writer.commit(table.table_id, change)
        except NothingToDo:
            return False
        return True

    async def leave_game(self, table: LobbyTable, seat: int, player_id: str) -> bool:
        """The player leaves the running game: by the rules' ``leave`` where the game has one
        (its total frozen, the round dealt again), else a bot takes the seat over.
        Returns True when a bot now plays the seat."""
        if has_leave_and_chat(table.game):
            def leave(game: Game, head: CommitRecord) -> Change:
                action = {"type": "leave"}
                try:
                    events = game.apply(seat, action)
                except RuleError as err:  # already left (a retried leave): nothing more to do
                    raise NothingToDo from err
                return Change(game, events, head.meta, seat, action)

            await self._edit(table, seat, player_id, leave)
            return False

        def hand_to_bot(game: Game, head: CommitRecord) -> Change:
            if head.meta.is_bot(seat):
                raise NothingToDo
            meta = dataclasses.replace(head.meta, bots={**head.meta.bots, str(seat): STAND_IN_LEVEL})
            return Change(game, [{"type": "seat_bot", "seat": seat}], meta)

        handed = await self._edit(table, seat, player_id, hand_to_bot)
        return handed or await self._bot_plays(table, seat)

    async def _bot_plays(self, table: LobbyTable, seat: int) -> bool:
        """True when a bot plays the seat in the table's running game (a repeated hand-over)."""
        head = await self.store.head(table.table_id)
        return (head.meta.game_no == table.games_played and head.meta.is_bot(seat)
                and not head.game().over)

    async def reclaim(self, table: LobbyTable, seat: int, player_id: str) -> None:
        """Give the seat back from its stand-in bot to the player who left it."""

        def take_back(game: Game, head: CommitRecord) -> Change:
            if not head.meta.is_bot(seat):
                raise NothingToDo
            bots = {key: level for key, level in head.meta.bots.items() if key != str(seat)}
            return Change(game, [{"type": "seat_reclaimed", "seat": seat}],
                          dataclasses.replace(head.meta, bots=bots))

        await self._edit(table, seat, player_id, take_back)

    async def chat_in_game(self, table: LobbyTable, seat: int, player_id: str, text: str) -> bool:
        """Table talk as the rules' ``chat`` action where the game has one; RuleError when the
        rules refuse it. False when no game of this table runs (talk is then lobby news)."""
        if not has_leave_and_chat(table.game) or table.status != Status.PLAYING:
            return False

        def chat(game: Game, head: CommitRecord) -> Change:
            action = {"type": "chat", "text": text}
            return Change(game, game.apply(seat, action), head.meta, seat, action)

        return await self._edit(table, seat, player_id, chat)

    # -- the end of a game -----------------------------------------------------------------------

    async def finish(self, table_id: str, game_no: int, seq: int, result: dict[str, Any]) -> None:
        """A game ended (its ``game_over`` result): un-ready people, free stand-in seats,
        seat newcomers. Repeated results change nothing."""
        try:
            table = await self.repo.get(table_id)
        except Refusal:
            return  # not a lobby table, or closed since
        if table.status != Status.PLAYING or table.games_played != game_no:
            return
        final = await self.store.record(table_id, seq)
        carry = carried_over(table.game, final.game())
        try:
            table, seated = await self.repo.change(table_id, lambda t: t.end_game(game_no, carry))
        except Moved:
            return
        log.info("game_finished", table_id=table_id, game_no=game_no, newcomers_seated=seated)
        await self.lifetime.waiting_from(table_id, final.at)
        await self.news.tell(table, "game_finished")
        await self.news.record(table, "finished", seq=seq, winners=result.get("winners"),
                               scores=result.get("scores"))
        if table.closed:
            await self.news.record(table, "closed")

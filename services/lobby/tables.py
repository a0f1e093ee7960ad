"""What players do with tables: create, list, sit down, watch, get ready, add bots, leave, talk.

Each call reads the newest table, plans (touching the running game first where
a seat changes hands in it), then changes the lobby document by compare-and-set
and tells the table's watchers. A plan overtaken by a game starting or ending
is made again on the newer table.
"""

from __future__ import annotations

import functools
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

from services.lobby.catalog import (
    bot_level,
    check_seat_count,
    game_options,
    new_game,
    turn_seconds,
)
from services.lobby.lifetime import TableLifetime
from services.lobby.model import NO_SEAT, LobbyTable, Moved, SeatState, Status
from services.lobby.news import TableNews
from services.lobby.private import TableCodes
from services.lobby.series import GameSeries
from services.lobby.store import TableRepository
from shared.api.stammtisch.v1 import common_pb2
from shared.errors import Refusal
from shared.ids import check_table_id
from shared.infra.runtime import Runtime
from shared.obs.logs import get_logger
from shared.rpc.auth import Identity
from shared.rpc.catalog import game_named, game_or_all
from shared.rpc.errors import invalid, precondition, unavailable

log = get_logger("lobby.tables")

MAX_CHAT = 200
DEFAULT_LIST = 50
MAX_LIST = 200
#: A plan is made again at most this often when games start or end under it.
MAX_PLANS = 5


def check_chat(text: str) -> str:
    """1 to 200 printable characters, not only white space."""
    if not 1 <= len(text) <= MAX_CHAT or not text.isprintable() or not text.strip():
        raise invalid(f"chat text must be 1 to {MAX_CHAT} printable characters")
    return text


class Lobby:
    """Table operations of one process; all state is in Redis."""

    def __init__(self, runtime: Runtime) -> None:
        self.settings = runtime.settings
        self.repo = TableRepository(runtime)
        self.news = TableNews(runtime)
        self.lifetime = TableLifetime(runtime, self.repo, self.news)
        self.series = GameSeries(runtime, self.repo, self.news, self.lifetime)
        self.codes = TableCodes(runtime)

    async def _tell(self, table: LobbyTable, change: str, who: Identity, text: str = "") -> None:
        await self.news.tell(table, change, who.player_id, text)
        if table.closed:
            await self.news.record(table, "closed")

    # -- creating and finding tables -------------------------------------------------------

    async def create(self, who: Identity, game_name: str, seats: int,
                     options_pb: common_pb2.TableOptions, join: bool, private: bool = False) -> LobbyTable:
        """A new table of a catalogue game; the options are checked against the game's option
        specs, then by creating the game once. A private table gets a join code and its
        creator as its first guest (services/lobby/private.py)."""
        game = game_named(game_name)
        check_seat_count(game, seats)
        options = game_options(game, options_pb)
        turn = turn_seconds(options_pb, self.settings.turn_seconds)
        new_game(game, seats, options, seed=0)
        table = LobbyTable(uuid.uuid4().hex, game, options, turn,
                           [SeatState() for _ in range(seats)], time.time())
        if private:
            await self.codes.make_private(table, who.player_id)
        if join:
            table.join(who.player_id, who.name, 0)
        table = await self.repo.add(table)
        await self.lifetime.waiting_from(table.table_id, table.created_at)
        return table

    async def create_seated(self, game: str, players: list[tuple[str, str]]) -> LobbyTable:
        """A table of players who are seated and ready at once (quick match); starts the game."""
        table = LobbyTable(uuid.uuid4().hex, game, {}, self.settings.turn_seconds,
                           [SeatState(player_id, name, ready=True) for player_id, name in players],
                           time.time())
        table = await self.repo.add(table)
        await self.lifetime.waiting_from(table.table_id, table.created_at)
        try:
            return await self.series.start_if_ready(table)
        except Refusal as err:  # everyone is seated and ready: the next SetReady starts it
            log.warning("quick_match_start_failed", table_id=table.table_id, reason=err.message)
            return table

    async def get(self, table_id: str) -> LobbyTable:
        """One table."""
        return await self.repo.get(table_id)

    async def list(self, game_name: str, open_only: bool, limit: int) -> list[LobbyTable]:
        """Newest tables first, of one game or of every game ("")."""
        if not 0 <= limit <= MAX_LIST:
            raise invalid(f"limit must be 0 (default {DEFAULT_LIST}) to {MAX_LIST}")
        game = game_or_all(game_name)
        return await self.repo.list(game, open_only, limit or DEFAULT_LIST)

    # -- seats -------------------------------------------------------------------------------------

    async def join(self, who: Identity, table_id: str, wish: int | None,
                   spectator: bool) -> tuple[LobbyTable, int]:
        """Sit down (or queue for the next game, or watch); a player who left a running game
        takes their seat back from the bot. Returns the table and the seat (-1: none yet)."""
        for _plan in range(MAX_PLANS):
            table = await self.repo.get(table_id)
            seat = table.seat_of(who.player_id)
            if seat is not None and table.seats[seat].stand_in and not spectator:
                await self.series.reclaim(table, seat, who.player_id)
                try:
                    table, reclaimed = await self.repo.change(table_id, lambda t: t.reclaim(who.player_id))
                except Moved:
                    continue
                await self._tell(table, "reclaimed", who)
                return table, reclaimed
            if spectator:
                table, _ = await self.repo.change(table_id, lambda t: t.spectate(who.player_id))
                await self._tell(table, "spectating", who)
                return table, NO_SEAT
            table, taken = await self.repo.change(
                table_id, lambda t: t.join(who.player_id, who.name, wish))
            await self._tell(table, "waiting" if taken is None else "seated", who)
            return table, NO_SEAT if taken is None else taken
        raise unavailable("the table keeps changing; retry")

    async def leave(self, who: Identity, table_id: str) -> LobbyTable:
        """Leave a seat, the waiting list or the spectators; a running game goes on without you."""
        for _plan in range(MAX_PLANS):
            table = await self.repo.get(table_id)
            seat = table.seat_of(who.player_id)
            planned: int | None = None
            stand_in = False
            if seat is not None and table.seats[seat].person and table.status == Status.PLAYING:
                planned = table.games_played
                stand_in = await self.series.leave_game(table, seat, who.player_id)
            try:
                table, _was = await self.repo.change(
                    table_id, functools.partial(LobbyTable.leave, player_id=who.player_id,
                                                planned_game=planned, stand_in=stand_in))
            except Moved:
                continue
            await self._tell(table, "left", who)
            return table
        raise unavailable("the table keeps changing; retry")

    async def set_ready(self, who: Identity, table_id: str, ready: bool) -> LobbyTable:
        """Mark the caller's own seat; the game starts once every seat is ready."""
        table, _seat = await self.repo.change(table_id, lambda t: t.set_ready(who.player_id, ready))
        await self._tell(table, "ready" if ready else "not_ready", who)
        return await self.series.start_if_ready(table)

    async def add_bot(self, who: Identity, table_id: str, wish: int | None, level: str) -> LobbyTable:
        """Seat a server bot; it is always ready."""
        chosen = bot_level((await self.repo.get(table_id)).game, level)
        table, _seat = await self.repo.change(table_id, lambda t: t.add_bot(who.player_id, chosen, wish))
        await self._tell(table, "bot_added", who)
        return await self.series.start_if_ready(table)

    # -- talk and news ------------------------------------------------------------------------------

    async def chat(self, who: Identity, table_id: str, text: str) -> None:
        """Table talk: in a running game with its own chat a rules action (refused in the forehead
        round), always news for the table's watchers."""
        text = check_chat(text)
        table = await self.repo.get(table_id)
        if not table.knows(who.player_id):
            raise precondition("sit down at or watch this table to chat")
        seat = table.seat_of(who.player_id)
        if seat is not None and table.seats[seat].person:
            await self.series.chat_in_game(table, seat, who.player_id, text)
        await self._tell(table, "chat", who, text)

    async def watch(self, table_id: str) -> AsyncIterator[tuple[LobbyTable, dict[str, Any]]]:
        """The table now (change "snapshot"), then every change as (table, news) until it closes."""
        check_table_id(table_id)
        async with self.news.listen(table_id) as queue:
            table = await self.repo.get(table_id)
            yield table, {"change": "snapshot"}
            seen = table.version
            while True:
                news = await queue.get()
                table = LobbyTable.from_dict(news["table"])
                if news["change"] != "chat" and table.version <= seen:
                    continue  # older than what the watcher has (news may cross on the wire)
                seen = max(seen, table.version)
                yield table, news
                if news["change"] == "closed":
                    return

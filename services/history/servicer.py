"""HistoryService: a player's finished games and any finished game's replay.

Spectator rules: a finished game is public. Its replay (every card, the seed
and salt) goes to anyone logged in, seated there or not, because nothing of it
can change any more. A game that is still running has no replay for anyone,
its own players included: the only live picture is the player's own view
(engine GetView), so no call here can show a hand another seat holds.
"""

from __future__ import annotations

import base64
import binascii
import re

import grpc

from services.history.store import ArchiveStore
from shared.api.stammtisch.v1 import history_pb2, history_pb2_grpc
from shared.archive.messages import REPLAY_PAGE_BYTES, replay_page, summary_proto
from shared.errors import NotFound
from shared.ids import check_table_id
from shared.infra.runtime import Runtime
from shared.rpc.auth import caller
from shared.rpc.errors import ServiceError, invalid, not_found, precondition, unavailable
from shared.tables.log import TableLog

DEFAULT_PAGE = 20
MAX_PAGE = 100
_ENTRY = re.compile(r"\d{13}\|[A-Za-z0-9_-]{1,64}\|\d{1,9}")


def _token_of(entry: str) -> str:
    return base64.urlsafe_b64encode(entry.encode()).decode()


def _entry_of(token: str) -> str:
    """The history entry a page token continues after; INVALID_ARGUMENT for any other text."""
    try:
        entry = base64.urlsafe_b64decode(token.encode()).decode()
    except (binascii.Error, UnicodeError, ValueError) as err:
        raise invalid("page_token is not one this call gave") from err
    if not _ENTRY.fullmatch(entry):
        raise invalid("page_token is not one this call gave")
    return entry


class HistoryServicer(history_pb2_grpc.HistoryServiceServicer):
    """Reads the archive; writes nothing."""

    def __init__(self, runtime: Runtime, archive: ArchiveStore) -> None:
        self.archive = archive
        self.tables = TableLog(runtime)

    async def ListMyGames(self, request: history_pb2.ListMyGamesRequest,
                          context: grpc.aio.ServicerContext) -> history_pb2.ListMyGamesResponse:
        """The caller's finished games, newest first, ``page_size`` at a time."""
        if not 0 <= request.page_size <= MAX_PAGE:
            raise invalid(f"page_size must be 0 (the default, {DEFAULT_PAGE}) to {MAX_PAGE}")
        size = request.page_size or DEFAULT_PAGE
        before = _entry_of(request.page_token) if request.page_token else ""
        me = caller().player_id
        entries = await self.archive.page(me, size + 1, before)
        page, more = entries[:size], len(entries) > size
        games = []
        for summary in await self.archive.summaries(page):
            seat = next((s["seat"] for s in summary["seats"] if s.get("player_id") == me), -1)
            games.append(summary_proto(summary, seat))
        return history_pb2.ListMyGamesResponse(games=games,
                                               next_page_token=_token_of(page[-1]) if more else "")

    async def GetReplay(self, request: history_pb2.GetReplayRequest,
                        context: grpc.aio.ServicerContext) -> history_pb2.GetReplayResponse:
        """One page of the game once it is over (its commits after ``after_seq``, at most
        ``page_bytes``, at most :data:`REPLAY_PAGE_BYTES`); refused while it runs."""
        caller()
        table_id = check_table_id(request.table_id)
        if request.game_no < 0:
            raise invalid("game_no must be 0 (the newest finished game) or a game number from 1")
        if request.after_seq < 0:
            raise invalid("after_seq must be 0 (from the start) or a previous page's next_after_seq")
        if request.page_bytes < 0:
            raise invalid(f"page_bytes must be 0 (the server's bound, {REPLAY_PAGE_BYTES}) or more")
        game_no = request.game_no or await self.archive.newest_game(table_id)
        found = await self.archive.get(table_id, game_no) if game_no else None
        if found is not None:
            return replay_page(found[0], request.after_seq,
                               min(request.page_bytes or REPLAY_PAGE_BYTES, REPLAY_PAGE_BYTES))
        raise await self._why_none(table_id, game_no)

    async def _why_none(self, table_id: str, game_no: int | None) -> ServiceError:
        """Why a game has no replay (yet): running, closed, being archived, or not there."""
        try:
            head = await self.tables.head(table_id)
        except NotFound:
            return not_found(f"a finished game at table {table_id!r}")
        if game_no is None:
            game_no = head.meta.game_no
        if head.meta.game_no < game_no:
            return not_found(f"game {game_no} at table {table_id!r}")
        if head.meta.game_no == game_no and head.meta.closed:
            return precondition(f"game {game_no} at table {table_id!r} was closed before it ended "
                                f"({head.meta.closed}); only finished games have a replay")
        if head.meta.game_no == game_no and not head.game().over:
            return precondition(f"game {game_no} at table {table_id!r} is still running; "
                                "its replay opens once it is over")
        return unavailable(f"game {game_no} at table {table_id!r} has just ended and is being "
                           "archived; retry in a moment")

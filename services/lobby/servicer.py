"""The LobbyService RPCs: a thin shell over the table operations and quick match."""

from __future__ import annotations

from collections.abc import AsyncIterator

import grpc
import structlog
from google.protobuf.timestamp_pb2 import Timestamp

from services.lobby.catalog import games_proto
from services.lobby.convert import table_proto
from services.lobby.model import LobbyTable
from services.lobby.players import PlayerNames
from services.lobby.quickmatch import QuickMatch
from services.lobby.tables import Lobby
from shared.api.stammtisch.v1 import lobby_pb2, lobby_pb2_grpc
from shared.ids import check_table_id, new_player_id
from shared.infra.runtime import Runtime
from shared.rpc.auth import TokenSigner, caller
from shared.rpc.errors import invalid
from shared.tables.placement import play_port

MAX_NAME = 24


def _bind_table(table_id: str) -> None:
    """Check a request's table id at the door, then tag the request's log lines with it."""
    structlog.contextvars.bind_contextvars(table_id=check_table_id(table_id))


class LobbyServicer(lobby_pb2_grpc.LobbyServiceServicer):
    """Login issues tokens and ListGames shows the catalogue to anyone; every other call acts as
    the token's player, never as the request says."""

    def __init__(self, runtime: Runtime, lobby: Lobby, quick: QuickMatch, names: PlayerNames) -> None:
        self.lobby = lobby
        self.quick = quick
        self.names = names
        settings = self.settings = runtime.settings
        self.signer = TokenSigner.from_settings(settings)
        self.token_ttl = settings.guest_token_ttl_seconds

    def _table(self, table: LobbyTable) -> lobby_pb2.Table:
        """The table as players see it, with the port of the worker that holds it."""
        return table_proto(table, play_port(self.settings, table.game, table.table_id))

    async def Login(self, request: lobby_pb2.LoginRequest,
                    context: grpc.aio.ServicerContext) -> lobby_pb2.LoginResponse:
        """A guest login: any printable name of 1 to 24 characters gets a fresh player id."""
        name = request.name.strip()
        if not 1 <= len(name) <= MAX_NAME or not name.isprintable():
            raise invalid(f"name must be 1 to {MAX_NAME} printable characters")
        player_id = new_player_id()
        token, identity = self.signer.issue(player_id, name, ttl_seconds=self.token_ttl)
        await self.names.remember(player_id, name, self.token_ttl)
        expires = Timestamp()
        expires.FromSeconds(int(identity.expires_at))
        return lobby_pb2.LoginResponse(token=token, player_id=player_id, expires_at=expires)

    async def ListGames(self, request: lobby_pb2.ListGamesRequest,
                        context: grpc.aio.ServicerContext) -> lobby_pb2.ListGamesResponse:
        """The catalogue: every game with its seats, options, bot levels, schemas and service."""
        return games_proto()

    async def CreateTable(self, request: lobby_pb2.CreateTableRequest,
                          context: grpc.aio.ServicerContext) -> lobby_pb2.CreateTableResponse:
        table = await self.lobby.create(caller(), request.game, request.seats, request.options,
                                        request.join, request.private)
        _bind_table(table.table_id)
        return lobby_pb2.CreateTableResponse(table=self._table(table), code=table.code)

    async def ListTables(self, request: lobby_pb2.ListTablesRequest,
                         context: grpc.aio.ServicerContext) -> lobby_pb2.ListTablesResponse:
        tables = await self.lobby.list(request.game, request.open_only, request.limit)
        return lobby_pb2.ListTablesResponse(tables=[self._table(table) for table in tables])

    async def GetTable(self, request: lobby_pb2.GetTableRequest,
                       context: grpc.aio.ServicerContext) -> lobby_pb2.GetTableResponse:
        _bind_table(request.table_id)
        return lobby_pb2.GetTableResponse(table=self._table(await self.lobby.get(request.table_id)))

    async def JoinTable(self, request: lobby_pb2.JoinTableRequest,
                        context: grpc.aio.ServicerContext) -> lobby_pb2.JoinTableResponse:
        _bind_table(request.table_id)
        wish = request.seat if request.HasField("seat") else None
        table, seat = await self.lobby.join(caller(), request.table_id, wish, request.spectator)
        return lobby_pb2.JoinTableResponse(table=self._table(table), seat=seat)

    async def LeaveTable(self, request: lobby_pb2.LeaveTableRequest,
                         context: grpc.aio.ServicerContext) -> lobby_pb2.LeaveTableResponse:
        _bind_table(request.table_id)
        table = await self.lobby.leave(caller(), request.table_id)
        return lobby_pb2.LeaveTableResponse(table=self._table(table))

    async def SetReady(self, request: lobby_pb2.SetReadyRequest,
                       context: grpc.aio.ServicerContext) -> lobby_pb2.SetReadyResponse:
        _bind_table(request.table_id)
        table = await self.lobby.set_ready(caller(), request.table_id, request.ready)
        return lobby_pb2.SetReadyResponse(table=self._table(table))

    async def AddBot(self, request: lobby_pb2.AddBotRequest,
                     context: grpc.aio.ServicerContext) -> lobby_pb2.AddBotResponse:
        _bind_table(request.table_id)
        wish = request.seat if request.HasField("seat") else None
        table = await self.lobby.add_bot(caller(), request.table_id, wish, request.level)
        return lobby_pb2.AddBotResponse(table=self._table(table))

    async def QuickMatch(self, request: lobby_pb2.QuickMatchRequest,  # type: ignore[override]
                         context: grpc.aio.ServicerContext) -> AsyncIterator[lobby_pb2.QuickMatchResponse]:
        async for update in self.quick.wait(caller(), request.game, request.seats):
            if update.table is None:
                yield lobby_pb2.QuickMatchResponse(queued=update.queued)
            else:
                _bind_table(update.table.table_id)
                yield lobby_pb2.QuickMatchResponse(queued=update.queued, table=self._table(update.table),
                                                   seat=update.seat)

    async def SendChat(self, request: lobby_pb2.SendChatRequest,
                       context: grpc.aio.ServicerContext) -> lobby_pb2.SendChatResponse:
        _bind_table(request.table_id)
        await self.lobby.chat(caller(), request.table_id, request.text)
        return lobby_pb2.SendChatResponse()

    async def WatchTable(self, request: lobby_pb2.WatchTableRequest,  # type: ignore[override]
                         context: grpc.aio.ServicerContext) -> AsyncIterator[lobby_pb2.WatchTableResponse]:
        _bind_table(request.table_id)
        async for table, news in self.lobby.watch(request.table_id):
            yield lobby_pb2.WatchTableResponse(
                table=self._table(table), change=news["change"],
                player_id=news.get("player_id", ""), text=news.get("text", ""))


"""The lobby process: tables, seats and quick match, the lobby's side of every game's end,
and the accounts and history rooms it also hosts."""

from __future__ import annotations

import grpc

from services.accounts.devices import Accounts
from services.accounts.privacy import PlayerData
from services.accounts.servicer import AccountServicer
from services.accounts.sessions import Sessions
from services.history.consumer import Archiver
from services.history.servicer import HistoryServicer
from services.history.store import ArchiveStore
from services.host.base import Service
from services.lobby.consumer import LobbyResults
from services.lobby.players import PlayerNames
from services.lobby.quickmatch import QuickMatch
from services.lobby.servicer import LobbyServicer
from services.lobby.tables import Lobby
from services.scoring.store import ScoreStore
from shared.api.stammtisch.v1 import accounts_pb2_grpc, history_pb2_grpc, lobby_pb2_grpc
from shared.infra.runtime import Runtime


class LobbyService(Service):
    """Owns players (guests and accounts) and sessions, tables and seats, quick match, the lobby
    side of every game's end, and the history of finished games."""

    name = "lobby"
    full_name = "stammtisch.v1.LobbyService"
    also_serves = ("stammtisch.v1.AccountService", "stammtisch.v1.HistoryService")

    def __init__(self, runtime: Runtime) -> None:
        super().__init__(runtime)
        self.names = PlayerNames(runtime)
        self.lobby = Lobby(runtime)
        self.quick = QuickMatch(runtime, self.lobby, self.names)
        self.results = LobbyResults(runtime, self.lobby.series)
        self.archive = ArchiveStore(runtime)
        self.archiver = Archiver(runtime, self.archive)

    def register(self, server: grpc.aio.Server) -> None:
        lobby_pb2_grpc.add_LobbyServiceServicer_to_server(
            LobbyServicer(self.runtime, self.lobby, self.quick, self.names), server)
        data = PlayerData(Accounts(self.runtime),
                          Sessions(self.runtime, self.runtime.settings.refresh_ttl_seconds),
                          self.archive, ScoreStore(self.runtime))
        accounts_pb2_grpc.add_AccountServiceServicer_to_server(AccountServicer(self.runtime, data), server)
        history_pb2_grpc.add_HistoryServiceServicer_to_server(HistoryServicer(self.runtime, self.archive),
                                                              server)

    async def start(self) -> None:
        """The durable consumer that turns finished games into tables between games, and the
        sweep that closes tables nobody plays, and the archiver of finished games."""
        await self.results.start()
        await self.archiver.start()
        self.spawn(self.lobby.lifetime.run_forever(), "table-lifetime")

    async def stop(self) -> None:
        """Stop consuming results, then the background tasks."""
        await self.results.stop()
        await self.archiver.stop()
        await super().stop()


def create(runtime: Runtime) -> Service:
    """Entry point for the runner."""
    return LobbyService(runtime)

"""The lobby process: tables, seats and quick match, and the lobby's side of every game's end.

The same process also hosts the accounts and history rooms (their own service.py wires them):
they share the lobby's port and replicas rather than being deployed on their own.
"""

from __future__ import annotations

import grpc

from services.accounts.service import AccountsPart
from services.history.service import HistoryPart
from services.host.base import Service
from services.lobby.consumer import LobbyResults
from services.lobby.players import PlayerNames
from services.lobby.quickmatch import QuickMatch
from services.lobby.servicer import LobbyServicer
from services.lobby.tables import Lobby
from shared.api.stammtisch.v1 import lobby_pb2_grpc
from shared.infra.runtime import Runtime


class LobbyService(Service):
    """Owns guests, tables and seats, quick match and the lobby side of every game's end; hosts
    accounts and history."""

    name = "lobby"
    full_name = "stammtisch.v1.LobbyService"
    also_serves = (AccountsPart.full_name, HistoryPart.full_name)

    def __init__(self, runtime: Runtime) -> None:
        super().__init__(runtime)
        self.names = PlayerNames(runtime)
        self.lobby = Lobby(runtime)
        self.quick = QuickMatch(runtime, self.lobby, self.names)
        self.results = LobbyResults(runtime, self.lobby.series)
        self.history = HistoryPart(runtime)
        self.parts = (AccountsPart(runtime, self.history.archive), self.history)

    def register(self, server: grpc.aio.Server) -> None:
        lobby_pb2_grpc.add_LobbyServiceServicer_to_server(
            LobbyServicer(self.runtime, self.lobby, self.quick, self.names), server)
        for part in self.parts:
            part.register(server)

    async def start(self) -> None:
        """Consume results (tables between games), start the hosted parts, sweep idle tables."""
        await self.results.start()
        for part in self.parts:
            await part.start()
        self.spawn(self.lobby.lifetime.run_forever(), "table-lifetime")

    async def stop(self) -> None:
        """Stop consuming results and the hosted parts, then the background tasks."""
        await self.results.stop()
        for part in self.parts:
            await part.stop()
        await super().stop()


def create(runtime: Runtime) -> Service:
    """Entry point for the runner."""
    return LobbyService(runtime)

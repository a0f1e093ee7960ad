"""Tournaments: the TournamentService over gRPC, the results consumer and the director.

Any number of replicas may run; the director of each tournament is whichever
replica holds its lease, and the results consumer is shared by all of them.
"""

from __future__ import annotations

import grpc

from services.host.base import Service
from services.lobby.tables import Lobby
from services.tournament.consumer import TournamentResults
from services.tournament.director import Director
from services.tournament.servicer import TournamentServicer
from services.tournament.store import TournamentStore
from services.tournament.tables import TournamentTables
from services.tournament.watchers import TournamentWatchers
from shared.api.stammtisch.v1 import tournament_pb2_grpc
from shared.infra.runtime import Runtime


class TournamentService(Service):
    """Runs tournaments: registration, seating, rounds and standings."""

    name = "tournament"
    full_name = "stammtisch.v1.TournamentService"

    def __init__(self, runtime: Runtime) -> None:
        super().__init__(runtime)
        self.store = TournamentStore(runtime)
        self.tables = TournamentTables(Lobby(runtime))
        self.results = TournamentResults(runtime, self.store)
        self.director = Director(self.store, self.tables)
        self.watchers = TournamentWatchers(self.store)

    def register(self, server: grpc.aio.Server) -> None:
        tournament_pb2_grpc.add_TournamentServiceServicer_to_server(
            TournamentServicer(self.runtime, self.store, self.tables, self.watchers), server)

    async def start(self) -> None:
        """Consume results, and direct whatever tournaments this replica can lease."""
        await self.results.start()
        self.spawn(self.director.run_forever(), "director")

    async def stop(self) -> None:
        """Stop directing (leases given up), then consuming."""
        await super().stop()
        await self.watchers.close()
        await self.director.stop()
        await self.results.stop()


def create(runtime: Runtime) -> Service:
    """Entry point for the runner."""
    return TournamentService(runtime)

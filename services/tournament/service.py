"""Tournaments: the TournamentService over gRPC, the results consumer, the director and the
scheduler of recurring tournaments.

The tournament page (page.py) is served by the same process on its own HTTP port.
Any number of replicas may run; the director of each tournament is whichever
replica holds its lease, and the results consumer is shared by all of them.
"""

from __future__ import annotations

import contextlib

import grpc

from services.host.base import Service
from services.lobby.tables import Lobby
from services.tournament.consumer import TournamentResults
from services.tournament.director import Director
from services.tournament.feed import PageFeeds
from services.tournament.page import TournamentPage
from services.tournament.schedules import Scheduler, ScheduleStore
from services.tournament.servicer import TournamentServicer
from services.tournament.store import TournamentStore
from services.tournament.tables import TournamentTables
from services.tournament.watchers import TournamentWatchers
from shared.api.stammtisch.v1 import tournament_pb2_grpc
from shared.infra.runtime import UNREACHABLE, Runtime
from shared.obs.logs import get_logger
from shared.rpc.auth import TokenSigner

log = get_logger("tournament.service")


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
        schedules = ScheduleStore(runtime)
        self.scheduler = Scheduler(runtime, schedules, self.store)
        self.servicer = TournamentServicer(runtime, self.store, self.tables, self.watchers, schedules)
        self.page = TournamentPage(self.store, self.servicer, PageFeeds(self.store, self.watchers),
                                   TokenSigner.from_settings(runtime.settings))

    def register(self, server: grpc.aio.Server) -> None:
        tournament_pb2_grpc.add_TournamentServiceServicer_to_server(self.servicer, server)

    async def start(self) -> None:
        """Consume results, direct whatever tournaments this replica can lease, serve the page."""
        await self.results.start()
        self.spawn(self.director.run_forever(), "director")
        self.spawn(self.scheduler.run_forever(), "scheduler")
        settings = self.runtime.settings
        port = await self.page.start(settings.bind_host, settings.tournament_page_port, settings.share_ports)
        log.info("tournament_page", url=f"http://{settings.bind_host}:{port}/tournaments")

    async def stop(self) -> None:
        """Stop directing (leases given up), then consuming."""
        await super().stop()
        await self.page.stop()
        await self.watchers.close()
        await self.director.stop()
        with contextlib.suppress(*UNREACHABLE):
            await self.scheduler.stop()
        await self.results.stop()


def create(runtime: Runtime) -> Service:
    """Entry point for the runner."""
    return TournamentService(runtime)

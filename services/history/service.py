"""History's wiring: the HistoryService and the archiver of finished games, hosted by the lobby
process (see services/lobby/service.py)."""

from __future__ import annotations

import grpc

from services.history.consumer import Archiver
from services.history.servicer import HistoryServicer
from services.history.store import ArchiveStore
from services.host.base import Part
from shared.api.stammtisch.v1 import history_pb2_grpc
from shared.infra.runtime import Runtime


class HistoryPart(Part):
    """Finished games: archived from the results stream, served as summaries and replays."""

    full_name = "stammtisch.v1.HistoryService"

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.archive = ArchiveStore(runtime)
        self.archiver = Archiver(runtime, self.archive)

    def register(self, server: grpc.aio.Server) -> None:
        history_pb2_grpc.add_HistoryServiceServicer_to_server(HistoryServicer(self.runtime, self.archive),
                                                              server)

    async def start(self) -> None:
        """Join the replicas' archiver of finished games."""
        await self.archiver.start()

    async def stop(self) -> None:
        """Stop archiving; what is unacknowledged goes to another replica."""
        await self.archiver.stop()

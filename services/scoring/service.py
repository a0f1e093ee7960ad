"""Scoring: the results consumer in the background, the queries over gRPC."""

from __future__ import annotations

import grpc

from services.host.base import Service
from services.scoring.consumer import ScoringResults
from services.scoring.servicer import ScoringServicer
from services.scoring.store import ScoreStore
from shared.api.stammtisch.v1 import scoring_pb2_grpc
from shared.infra.runtime import Runtime


class ScoringService(Service):
    """Consumes results; answers result and leaderboard queries."""

    name = "scoring"
    full_name = "stammtisch.v1.ScoringService"

    def __init__(self, runtime: Runtime) -> None:
        super().__init__(runtime)
        self.store = ScoreStore(runtime)
        self.results = ScoringResults(runtime, self.store)

    def register(self, server: grpc.aio.Server) -> None:
        scoring_pb2_grpc.add_ScoringServiceServicer_to_server(ScoringServicer(self.store), server)

    async def start(self) -> None:
        """Join the replicas' durable consumer of results (created on first use)."""
        await self.results.start()

    async def stop(self) -> None:
        """Stop consuming; unacknowledged results go to another replica after the ack wait."""
        await self.results.stop()
        await super().stop()


def create(runtime: Runtime) -> Service:
    """Entry point for the runner."""
    return ScoringService(runtime)

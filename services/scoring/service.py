"""The scoring service's gRPC servicer."""

from __future__ import annotations

import grpc

from services.base import Service
from shared.api.stammtisch.v1 import scoring_pb2_grpc
from shared.runtime import Runtime


class ScoringService(Service):
    """Consumes results; answers result and leaderboard queries."""

    name = "scoring"
    full_name = "stammtisch.v1.ScoringService"

    def register(self, server: grpc.aio.Server) -> None:
        scoring_pb2_grpc.add_ScoringServiceServicer_to_server(
            scoring_pb2_grpc.ScoringServiceServicer(), server)


def create(runtime: Runtime) -> Service:
    """Entry point for the runner."""
    return ScoringService(runtime)

"""The arbiter's gRPC servicer."""

from __future__ import annotations

import grpc

from services.base import Service
from shared.api.stammtisch.v1 import arbiter_pb2_grpc
from shared.runtime import Runtime


class ArbiterService(Service):
    """Simultaneous Wie Waldi tables ordered by atomic commits."""

    name = "arbiter"
    full_name = "stammtisch.v1.ArbiterService"

    def register(self, server: grpc.aio.Server) -> None:
        arbiter_pb2_grpc.add_ArbiterServiceServicer_to_server(
            arbiter_pb2_grpc.ArbiterServiceServicer(), server)


def create(runtime: Runtime) -> Service:
    """Entry point for the runner."""
    return ArbiterService(runtime)

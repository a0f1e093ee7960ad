"""The engine's gRPC servicer."""

from __future__ import annotations

import grpc

from services.base import Service
from shared.api.stammtisch.v1 import engine_pb2_grpc
from shared.runtime import Runtime


class EngineService(Service):
    """Turn-based tables: Act, GetView, Subscribe."""

    name = "engine"
    full_name = "stammtisch.v1.EngineService"

    def register(self, server: grpc.aio.Server) -> None:
        engine_pb2_grpc.add_EngineServiceServicer_to_server(
            engine_pb2_grpc.EngineServiceServicer(), server)


def create(runtime: Runtime) -> Service:
    """Entry point for the runner."""
    return EngineService(runtime)

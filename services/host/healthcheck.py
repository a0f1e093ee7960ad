"""`stammtisch healthcheck`: exit 0 when a service reports SERVING (for container probes)."""

from __future__ import annotations

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from shared.config import Settings


def check(service: str, address: str | None = None, timeout: float = 3.0) -> bool:
    """Ask the standard health service of one Stammtisch service."""
    settings = Settings.from_env()
    target = address or f"127.0.0.1:{settings.ports[service]}"
    with grpc.insecure_channel(target) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        try:
            reply = stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=timeout)
        except grpc.RpcError:
            return False
    return bool(reply.status == health_pb2.HealthCheckResponse.SERVING)

"""`stammtisch healthcheck`: exit 0 when a service reports SERVING (for container probes)."""

from __future__ import annotations

from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from shared.config import Settings
from shared.rpc.tls import certificate_name, channel_credentials


def _channel(settings: Settings, target: str) -> grpc.Channel:
    """Plaintext, or TLS when the services answer over TLS (STAMMTISCH_SERVICE_TLS), trusting
    STAMMTISCH_TLS_CA and checking the name their own certificate carries."""
    if not settings.service_tls:
        return grpc.insecure_channel(target)
    name = certificate_name(Path(settings.tls_cert))
    trusted = channel_credentials(Path(settings.tls_ca) if settings.tls_ca else None)
    return grpc.secure_channel(target, trusted, options=[("grpc.ssl_target_name_override", name)])


def check(service: str, address: str | None = None, timeout: float = 3.0) -> bool:
    """Ask the standard health service of one Stammtisch service."""
    settings = Settings.from_env()
    target = address or f"127.0.0.1:{settings.ports[service]}"
    with _channel(settings, target) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        try:
            reply = stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=timeout)
        except grpc.RpcError:
            return False
    return bool(reply.status == health_pb2.HealthCheckResponse.SERVING)

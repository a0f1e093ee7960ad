"""One gRPC server bootstrap for every service: health, reflection, interceptor, limits."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import grpc
from google.protobuf import descriptor_pool
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_health.v1._async import HealthServicer
from grpc_reflection.v1alpha import reflection

from shared.config import MAX_REPLY_BYTES, Settings
from shared.obs.metrics import BAD_REQUESTS, count_from_zero
from shared.rpc.auth import TokenSigner
from shared.rpc.interceptors import RateLimiter, StammtischInterceptor
from shared.rpc.login_limits import LoginLimitInterceptor
from shared.rpc.tls import server_credentials
from shared.tables.placement import own_port

Register = Callable[[grpc.aio.Server], None]
#: Calls grpc-core may hold for the application before it cancels new ones (its defaults: 1,000
#: soft, 3,000 hard). The Python server takes up calls one at a time, so when thousands of phones
#: open their streams at once (a server restart, a tournament round) the queue runs past 1,000
#: and grpc-core CANCELLED part of them; now they queue (still bounded) and are served in turn.
MAX_PENDING_CALLS = 20_000


#: Longest wait for a keepalive ping's answer. A server busy with thousands of tournament entrants
#: read the answers late (its poller waits for the event loop) and dropped live clients at 10 s.
MAX_PING_WAIT_SECONDS = 20.0


def _keepalive_timeout_ms(settings: Settings) -> int:
    return int(min(MAX_PING_WAIT_SECONDS, settings.keepalive_seconds) * 1000)


def server_options(settings: Settings) -> list[tuple[str, int]]:
    """Message size limits and keepalive suited to mobile clients on flaky networks."""
    return [
        ("grpc.max_receive_message_length", settings.max_message_bytes),
        ("grpc.max_send_message_length", MAX_REPLY_BYTES),
        ("grpc.keepalive_time_ms", int(settings.keepalive_seconds * 1000)),
        # grpc-core waits grpc.http2.ping_timeout_ms (60 s by default) for a ping's answer,
        # whatever keepalive_timeout_ms says; both bound how long a silent client keeps its streams.
        ("grpc.keepalive_timeout_ms", _keepalive_timeout_ms(settings)),
        ("grpc.http2.ping_timeout_ms", _keepalive_timeout_ms(settings)),
        ("grpc.http2.min_ping_interval_without_data_ms", 10_000),
        ("grpc.keepalive_permit_without_calls", 1),
        # `stammtisch up --workers N`: N processes bind the same ports (services/host/workers.py).
        ("grpc.so_reuseport", int(settings.share_ports)),
        ("grpc.server.max_pending_requests", MAX_PENDING_CALLS // 2),
        ("grpc.server.max_pending_requests_hard_limit", MAX_PENDING_CALLS),
        # No bandwidth-delay probing of what clients send (small action messages): each probe is
        # a ping and its ack, extra wake-ups and syscalls per message. What the server sends is
        # sized by the client's own probing.
        ("grpc.http2.bdp_probe", 0),
    ]


def _add_port(server: grpc.aio.Server, address: str, settings: Settings) -> int:
    """Listen on ``address``: over TLS with STAMMTISCH_SERVICE_TLS, else in plaintext."""
    if settings.service_tls:
        if not (settings.tls_cert and settings.tls_key):
            raise ValueError("STAMMTISCH_SERVICE_TLS=1 needs STAMMTISCH_TLS_CERT and STAMMTISCH_TLS_KEY")
        return server.add_secure_port(address, server_credentials(Path(settings.tls_cert),
                                                                  Path(settings.tls_key)))
    return server.add_insecure_port(address)


async def create_server(
    address: str, service: str, full_names: Sequence[str], register: Register,
    settings: Settings, health: HealthServicer | None = None,
) -> tuple[grpc.aio.Server, int]:
    """Build and start a server on ``address`` (port 0 picks one); returns it and its port.
    ``register`` adds the servicers; ``full_names``, their proto names, are reported on health and
    listed by reflection."""
    signer = TokenSigner.from_settings(settings)
    limiter = RateLimiter(settings.actions_per_second, settings.actions_per_second * 2)
    # The login limit runs inside the main interceptor, which logs, measures and maps its refusals.
    server = grpc.aio.server(interceptors=[StammtischInterceptor(service, signer, limiter),
                                           LoginLimitInterceptor(settings.logins_per_minute,
                                                                 settings.trusted_proxies)],
                             options=server_options(settings))
    register(server)
    count_from_zero(BAD_REQUESTS, [(service, method.name) for name in full_names
                                   for method in descriptor_pool.Default().FindServiceByName(name).methods])
    health = health or HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health, server)
    names = [*full_names, health_pb2.DESCRIPTOR.services_by_name["Health"].full_name,
             reflection.SERVICE_NAME]
    reflection.enable_server_reflection(names, server)
    port = _add_port(server, address, settings)
    if port == 0:
        raise OSError(f"cannot bind gRPC server to {address}")
    own = own_port(settings, service)
    if own and _add_port(server, f"{address.rpartition(':')[0]}:{own}", settings) == 0:
        raise OSError(f"cannot bind this worker's own {service} port {own}")
    await server.start()
    for name in ("", *full_names):
        await health.set(name, health_pb2.HealthCheckResponse.SERVING)
    return server, port

"""Calls without a token (the logins, and ListGames) are rate-limited per peer address, per
server process.

The per-player limiter cannot see Login, LoginDevice, RefreshToken, Logout and ListGames (no token), and
LoginDevice runs scrypt, so an anonymous caller could otherwise keep a server's cores busy. Each
address gets a bounded token bucket of ``per_minute`` calls, refilled at ``per_minute`` a minute;
behind a proxy the address is the one the proxy names in X-Real-IP, believed only from the
proxies in STAMMTISCH_TRUSTED_PROXIES (the door of `stammtisch up`: loopback). It runs inside
:class:`StammtischInterceptor`, so a refused call is logged and measured like any other.
"""

from __future__ import annotations

import contextlib
import ipaddress
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

import grpc

from shared.rpc.errors import ServiceError
from shared.rpc.interceptors import PUBLIC_PREFIXES, RateLimiter

#: The token-less methods of Stammtisch's own services (health and reflection stay free:
#: probes and load balancers call them all the time). All of them are unary calls.
LIMITED_PREFIXES = tuple(prefix for prefix in PUBLIC_PREFIXES if prefix.startswith("/stammtisch."))


def peer_host(peer: str) -> str:
    """The address of a grpc peer without its port ("ipv4:10.0.0.7:51234" -> "ipv4:10.0.0.7",
    "ipv6:[::1]:51234" -> "ipv6:[::1]"); any other form (unix sockets) as it is."""
    kind, _, address = peer.partition(":")
    if kind in ("ipv4", "ipv6") and ":" in address:
        return f"{kind}:{address.rsplit(':', 1)[0]}"
    return peer


#: The header in which a trusted proxy names the client's address (the door sets it).
REAL_IP_HEADER = "x-real-ip"


def _ip_of(peer: str) -> str:
    """The bare IP of a grpc peer ("ipv4:10.0.0.7:51234" -> "10.0.0.7"; "" for other kinds)."""
    kind, _, address = peer_host(peer).partition(":")
    return address.strip("[]") if kind in ("ipv4", "ipv6") else ""


def trusted(networks: Iterable[str], address: str) -> bool:
    """``address`` (an IP) lies in one of ``networks`` (addresses or CIDR networks)."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in ipaddress.ip_network(network, strict=False) for network in networks)


def client_host(context: grpc.aio.ServicerContext, proxies: Iterable[str]) -> str:
    """Who the caller is, as :func:`peer_host` says: its peer address, or, when that peer is a
    trusted proxy that names the client in X-Real-IP, the client's address."""
    peer = context.peer()
    if proxies and trusted(proxies, _ip_of(peer)):
        named = dict(context.invocation_metadata() or ()).get(REAL_IP_HEADER, "")
        with contextlib.suppress(ValueError):
            ip = ipaddress.ip_address(str(named).strip())
            return f"ipv{ip.version}:{ip}" if ip.version == 4 else f"ipv6:[{ip}]"
    return peer_host(peer)


class LoginLimitInterceptor(grpc.aio.ServerInterceptor):
    """Refuses a token-less call with RESOURCE_EXHAUSTED once its peer's bucket is empty."""

    def __init__(self, per_minute: int, proxies: Iterable[str] = (), capacity: int = 100_000) -> None:
        self.per_minute = per_minute
        self.proxies = tuple(proxies)
        self.limiter = RateLimiter(per_minute / 60, per_minute, capacity)

    async def intercept_service(
        self, continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(handler_call_details)
        method: str = handler_call_details.method  # type: ignore[attr-defined]
        if handler is None or not method.startswith(LIMITED_PREFIXES):
            return handler
        behavior = handler.unary_unary
        if behavior is None:
            raise TypeError(f"{method}: only unary token-less calls are rate-limited")

        async def limited(request: Any, context: grpc.aio.ServicerContext) -> Any:
            if not self.limiter.allow(client_host(context, self.proxies)):
                raise ServiceError(grpc.StatusCode.RESOURCE_EXHAUSTED,
                                   f"too many logins from your address (over {self.per_minute} a "
                                   "minute); retry in a minute")
            return await behavior(request, context)

        return grpc.unary_unary_rpc_method_handler(
            limited, request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer)

"""Calls without a token (the logins, and ListGames) are rate-limited per peer address, per
server process.

The per-player limiter cannot see Login, LoginDevice, RefreshToken, Logout and ListGames (no token), and
LoginDevice runs scrypt, so an anonymous caller could otherwise keep a server's cores busy. Each
address gets a bounded token bucket of ``per_minute`` calls, refilled at ``per_minute`` a minute;
behind a proxy that hides clients' addresses raise STAMMTISCH_LOGINS_PER_MINUTE. It runs inside
:class:`StammtischInterceptor`, so a refused call is logged and measured like any other.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
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


class LoginLimitInterceptor(grpc.aio.ServerInterceptor):
    """Refuses a token-less call with RESOURCE_EXHAUSTED once its peer's bucket is empty."""

    def __init__(self, per_minute: int, capacity: int = 100_000) -> None:
        self.per_minute = per_minute
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
            if not self.limiter.allow(peer_host(context.peer())):
                raise ServiceError(grpc.StatusCode.RESOURCE_EXHAUSTED,
                                   f"too many logins from your address (over {self.per_minute} a "
                                   "minute); retry in a minute")
            return await behavior(request, context)

        return grpc.unary_unary_rpc_method_handler(
            limited, request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer)

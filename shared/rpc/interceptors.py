"""The server interceptor: request ids, token auth, rate limits, logging, metrics, errors.

One wrapper runs around every handler (unary or streaming, either way) so that each
concern happens exactly once per call, in this order: bind a request id,
authenticate, rate-limit, refuse an undecodable request, run the handler, map
failures to statuses, then log and measure the outcome.

The request deserializer is wrapped too: grpc calls it before any handler
code, and a parser error there would reach the client as UNKNOWN with the
parser's text. Instead it yields an :class:`Undecodable` marker that the
wrapper refuses with INVALID_ARGUMENT, logged and counted like any call.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import re
import time
import uuid
from collections import OrderedDict
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import grpc
import structlog
from grpc._cython.cygrpc import ExecuteBatchError

from shared.errors import Refusal
from shared.games.errors import RuleError
from shared.infra.runtime import UNREACHABLE
from shared.obs.logs import get_logger
from shared.obs.metrics import BAD_REQUESTS, RPC_LATENCY
from shared.rpc.auth import TokenSigner, bearer_token, set_identity
from shared.rpc.errors import ServiceError, invalid, rule_error_trailers, status_of_refusal

log = get_logger("rpc")

#: Methods callable without a token; a token attached to them is never even read.
PUBLIC_PREFIXES = ("/grpc.health.v1.Health/", "/grpc.reflection.", "/stammtisch.v1.LobbyService/Login",
                   "/stammtisch.v1.LobbyService/ListGames",
                   "/stammtisch.v1.AccountService/LoginDevice", "/stammtisch.v1.AccountService/RefreshToken",
                   "/stammtisch.v1.AccountService/Logout")
#: A client's x-request-id is kept when it looks like one; anything else gets a fresh id.
_REQUEST_ID = re.compile(r"[A-Za-z0-9_.:-]{1,64}")


#: Statuses worth an operator's attention; the rest (refused moves included) are routine.
_LEVELS = {"INTERNAL": log.error, "UNKNOWN": log.error, "DATA_LOSS": log.error,
           "UNAVAILABLE": log.warning, "RESOURCE_EXHAUSTED": log.warning,
           "DEADLINE_EXCEEDED": log.warning, "UNAUTHENTICATED": log.warning}


class RateLimiter:
    """A token bucket per player: ``rate`` calls per second, bursts up to ``burst``. A full bucket is
    the same as none, so the least recently used is forgotten once refilled, and at most
    ``capacity`` are kept (the oldest go first)."""

    def __init__(self, rate: float, burst: float, capacity: int = 100_000) -> None:
        self.rate = rate
        self.burst = burst
        self.capacity = capacity
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()

    def __len__(self) -> int:
        """Players with a bucket right now."""
        return len(self._buckets)

    def allow(self, key: str, now: float | None = None) -> bool:
        """Spend one token of ``key``'s bucket if there is one."""
        now = time.monotonic() if now is None else now
        tokens, last = self._buckets.pop(key, (self.burst, now))
        tokens = min(self.burst, tokens + (now - last) * self.rate)
        allowed = tokens >= 1
        self._buckets[key] = (tokens - 1 if allowed else tokens, now)
        self._forget(now)
        return allowed

    def _forget(self, now: float) -> None:
        while self._buckets:
            tokens, last = next(iter(self._buckets.values()))
            if len(self._buckets) <= self.capacity and tokens + (now - last) * self.rate < self.burst:
                return
            self._buckets.popitem(last=False)


@dataclass(frozen=True)
class Undecodable:
    """Stands in for a request whose bytes are not a valid message of the method's type."""

    reason: str


def _tolerant(deserializer: Callable[[bytes], Any] | None) -> Callable[[bytes], Any] | None:
    """The method's deserializer, returning :class:`Undecodable` where it would raise."""
    if deserializer is None:
        return None

    def deserialize(data: bytes) -> Any:
        try:
            return deserializer(data)
        except Exception as exc:  # noqa: BLE001 - whatever the parser says, the bytes are the client's
            return Undecodable(f"{type(exc).__name__}: {exc}"[:200])

    return deserialize


def _passthrough(serializer: Callable[[Any], bytes] | None) -> Callable[[Any], bytes] | None:
    """The method's serializer, sending bytes as they are: a handler may answer with the wire
    form of its response message, made once and shared (services/play/updates.py)."""
    if serializer is None:
        return None

    def serialize(message: Any) -> bytes:
        return message if type(message) is bytes else serializer(message)

    return serialize


class StammtischInterceptor(grpc.aio.ServerInterceptor):
    """Wraps every handler of one server (the service name labels its metrics)."""

    def __init__(self, service: str, signer: TokenSigner, limiter: RateLimiter) -> None:
        self.service = service
        self.signer = signer
        self.limiter = limiter

    async def intercept_service(
        self, continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(handler_call_details)
        if handler is None:
            return handler
        method: str = handler_call_details.method  # type: ignore[attr-defined]
        metadata = tuple(handler_call_details.invocation_metadata or ())  # type: ignore[attr-defined]
        public = method.startswith(PUBLIC_PREFIXES)
        codec = {"request_deserializer": _tolerant(handler.request_deserializer),
                 "response_serializer": _passthrough(handler.response_serializer)}
        if handler.unary_unary:
            return grpc.unary_unary_rpc_method_handler(
                self._wrap_unary(handler.unary_unary, method, metadata, public), **codec)
        if handler.unary_stream:
            return grpc.unary_stream_rpc_method_handler(
                self._wrap_stream(handler.unary_stream, method, metadata, public), **codec)
        if handler.stream_unary:
            return grpc.stream_unary_rpc_method_handler(
                self._wrap_unary(handler.stream_unary, method, metadata, public), **codec)
        return grpc.stream_stream_rpc_method_handler(
            self._wrap_stream(handler.stream_stream, method, metadata, public), **codec)

    def _begin(self, method: str, metadata: tuple[Any, ...], public: bool) -> None:
        """Bind ids, authenticate and rate-limit; raises ServiceError to refuse."""
        given = next((v for k, v in metadata if k == "x-request-id"), None)
        request_id = given if isinstance(given, str) and _REQUEST_ID.fullmatch(given) else uuid.uuid4().hex
        structlog.contextvars.clear_contextvars()
        structlog.contextvars.bind_contextvars(request_id=request_id, method=method)
        set_identity(None)
        if public:
            return
        token = bearer_token(metadata)
        if token is None:
            raise ServiceError(grpc.StatusCode.UNAUTHENTICATED, "missing token: log in first")
        identity = self.signer.verify(token)
        set_identity(identity)
        structlog.contextvars.bind_contextvars(player_id=identity.player_id)
        self._spend(identity.player_id)

    def _spend(self, player_id: str) -> None:
        """One token of the player's bucket, or RESOURCE_EXHAUSTED."""
        if not self.limiter.allow(player_id):
            raise ServiceError(grpc.StatusCode.RESOURCE_EXHAUSTED, "too many requests; slow down")

    def _refuse_undecodable(self, method: str, request: Undecodable) -> ServiceError:
        """Count the request and say why on the call's log line; the status is INVALID_ARGUMENT."""
        BAD_REQUESTS.labels(self.service, _short(method)).inc()
        structlog.contextvars.bind_contextvars(undecodable=request.reason)
        return invalid("the request is not a valid message of this method's type")

    async def _checked(self, method: str, requests: AsyncIterable[Any]) -> AsyncIterator[Any]:
        """A client stream of requests that refuses the first undecodable one and, on an
        authenticated call, spends a token per message after the first (the call's own):
        each action on a Play stream is rate-limited as a unary Act is."""
        player_id = structlog.contextvars.get_contextvars().get("player_id")
        first = True
        async for request in requests:
            if isinstance(request, Undecodable):
                raise self._refuse_undecodable(method, request)
            if not first and player_id is not None:
                self._spend(player_id)
            first = False
            yield request

    def _request(self, method: str, request: Any) -> Any:
        """The handler's argument: the message, or the checked stream of them."""
        if isinstance(request, Undecodable):
            raise self._refuse_undecodable(method, request)
        if hasattr(request, "__aiter__"):
            return self._checked(method, request)
        return request

    async def _fail(self, context: grpc.aio.ServicerContext, exc: Exception) -> None:
        """Turn an exception into the call's status (context.abort raises)."""
        if context.done() or isinstance(exc, ExecuteBatchError):
            # The client is gone (a handler's own abort failed, or a status sent now would):
            # the call ends as cancelled, without a traceback.
            raise asyncio.CancelledError
        code, message, trailers = self._status_of(exc)
        try:
            await context.abort(code, message, trailing_metadata=trailers)
        except grpc.aio.AbortError:
            raise
        except Exception as err:
            raise asyncio.CancelledError from err

    def _status_of(self, exc: Exception) -> tuple[grpc.StatusCode, str, tuple[tuple[str, bytes], ...]]:
        """The status, message and trailers a failure travels with."""
        if isinstance(exc, RuleError):
            return rule_error_trailers(exc)
        if isinstance(exc, Refusal):
            return status_of_refusal(exc), exc.message, ()
        if isinstance(exc, UNREACHABLE):
            log.warning("dependency_unreachable", error=repr(exc))
            return grpc.StatusCode.UNAVAILABLE, "a backing server is unreachable; retry", ()
        if isinstance(exc, NotImplementedError):
            method = structlog.contextvars.get_contextvars().get("method", "this method")
            return grpc.StatusCode.UNIMPLEMENTED, f"{method} is not available yet", ()
        log.exception("rpc_crashed")
        return grpc.StatusCode.INTERNAL, "internal error; see server logs", ()

    def _finish(self, method: str, context: grpc.aio.ServicerContext, started: float,
                fallback: grpc.StatusCode) -> None:
        code = context.code() or fallback
        name = code.name if isinstance(code, grpc.StatusCode) else str(code)
        elapsed = time.perf_counter() - started
        RPC_LATENCY.labels(self.service, _short(method), name).observe(elapsed)
        _LEVELS.get(name, log.info)("rpc", code=name, ms=round(elapsed * 1000, 2))

    @contextlib.asynccontextmanager
    async def _call(self, method: str, metadata: tuple[Any, ...], public: bool,
                    context: grpc.aio.ServicerContext) -> AsyncIterator[None]:
        """One call's scope: begin it, turn failures into statuses, then log and measure it."""
        started = time.perf_counter()
        status = grpc.StatusCode.OK
        try:
            self._begin(method, metadata, public)
            yield
        except asyncio.CancelledError:
            status = grpc.StatusCode.CANCELLED
            raise
        except grpc.aio.AbortError:
            raise
        except Exception as exc:  # noqa: BLE001 - every failure becomes a status
            # An abort sets context.code(); the fallback counts only when _fail finds the client
            # gone (its call done, or a send of this call failed in grpc-core before grpc said so:
            # a Play call with a 1 ms deadline, in the fuzz) and the call ends as cancelled.
            status = grpc.StatusCode.CANCELLED
            await self._fail(context, exc)
        finally:
            self._finish(method, context, started, status)

    def _wrap_unary(self, behavior: Callable[..., Any], method: str, metadata: tuple[Any, ...],
                    public: bool) -> Callable[..., Awaitable[Any]]:
        async def wrapper(request: Any, context: grpc.aio.ServicerContext) -> Any:
            async with self._call(method, metadata, public, context):
                return await behavior(self._request(method, request), context)
        return wrapper

    def _wrap_stream(self, behavior: Callable[..., Any], method: str, metadata: tuple[Any, ...],
                     public: bool) -> Callable[..., AsyncIterator[Any]]:
        async def wrapper(request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
            async with self._call(method, metadata, public, context):
                result = behavior(self._request(method, request), context)
                if inspect.isasyncgen(result):
                    async with contextlib.aclosing(result):  # a closed call closes the handler now
                        async for item in result:
                            yield item
                else:
                    await result
        return wrapper


def _short(method: str) -> str:
    """The method's own name ("Login" of "/stammtisch.v1.LobbyService/Login"), for metric labels."""
    return method.rsplit("/", 1)[-1]

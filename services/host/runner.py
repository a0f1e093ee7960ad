"""Run one or several services in this process until told to stop.

Shutdown order matters for clients: health turns NOT_SERVING first (load
balancers stop routing), then servers stop with a grace period (calls in
flight finish), then background tasks stop, then NATS drains and Redis closes.

While they run, a watcher keeps each service's health in step with the
servers it needs: NOT_SERVING while Redis or NATS is unreachable, SERVING
again once both are back (the connections heal by themselves, see
shared/infra/runtime.py).
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from importlib import import_module

import grpc
import redis.asyncio as aioredis
import redis.exceptions
from grpc_health.v1 import health_pb2
from grpc_health.v1._async import HealthServicer
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

from services.host.base import Service
from shared.config import SERVICE_NAMES, Settings
from shared.infra.runtime import Runtime, cluster_client, open_runtime
from shared.infra.tasks import not_cancelled
from shared.obs.logs import get_logger
from shared.rpc.server import create_server

#: The servers each service cannot answer without (all of them keep state in Redis and use NATS).
NEEDS: dict[str, tuple[str, ...]] = dict.fromkeys(SERVICE_NAMES, ("redis", "nats"))
#: How often the health watcher looks, and how long a Redis probe may take.
HEALTH_INTERVAL = 0.5
PROBE_TIMEOUT = 1.0

log = get_logger("runner")


@dataclass
class Running:
    """One started service."""

    service: Service
    server: grpc.aio.Server
    port: int
    health: HealthServicer


@asynccontextmanager
async def running_services(settings: Settings, names: Sequence[str]) -> AsyncIterator[list[Running]]:
    """Start the named services on their configured ports (0 = any); stop them on exit."""
    unknown = [n for n in names if n not in SERVICE_NAMES]
    if unknown:
        raise ValueError(f"unknown service(s): {', '.join(unknown)}; choose from {SERVICE_NAMES}")
    async with open_runtime(settings, name="stammtisch-" + "+".join(names)) as runtime:
        started: list[Running] = []
        try:
            for name in names:
                service = import_module(f"services.{name}.service").create(runtime)
                health = HealthServicer()
                server, port = await create_server(
                    f"{settings.bind_host}:{settings.ports[name]}", name, service.full_names(),
                    service.register, settings, health)
                started.append(Running(service, server, port, health))
                await service.start()
                log.info("service_started", service=name, port=port)
            watcher = asyncio.create_task(follow_dependencies(runtime, started), name="health")
            try:
                yield started
            finally:
                watcher.cancel()
                await asyncio.gather(watcher, return_exceptions=True)
        finally:
            await _shutdown(started, settings.grace_seconds)


async def follow_dependencies(runtime: Runtime, started: Sequence[Running],
                              interval: float = HEALTH_INTERVAL) -> None:
    """Set each service's health from whether the servers it needs answer, until cancelled. On Redis
    Cluster the probe pings every master it knows: REDIS_URL's seed node may be gone while the
    cluster serves every slot."""
    probe: aioredis.Redis
    options = {"socket_timeout": PROBE_TIMEOUT, "socket_connect_timeout": PROBE_TIMEOUT,
               "retry": Retry(NoBackoff(), 0)}
    if runtime.settings.redis_cluster:
        probe = cluster_client(runtime.settings.redis_url, **options)  # type: ignore[assignment]
    else:
        probe = aioredis.from_url(runtime.settings.redis_url, **options)
    reachable: dict[str, bool] = dict.fromkeys(("redis", "nats"), True)
    try:
        while not_cancelled():
            now = {"redis": await _answers(probe),
                   "nats": runtime.nats.is_connected and runtime.live.is_connected}
            if now != reachable:
                (log.info if all(now.values()) else log.warning)("dependencies_changed", **now)
                reachable = now
                for item in started:
                    await _set_health(item, all(now[need] for need in NEEDS[item.service.name]))
            await asyncio.sleep(interval)
    finally:
        await probe.aclose()


async def _answers(probe: aioredis.Redis) -> bool:
    try:
        return bool(await probe.ping())
    except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, redis.exceptions.ClusterError,
            redis.exceptions.RedisClusterException):
        return False


async def _set_health(item: Running, serving: bool) -> None:
    status = health_pb2.HealthCheckResponse.SERVING if serving else \
        health_pb2.HealthCheckResponse.NOT_SERVING
    for name in ("", *item.service.full_names()):
        await item.health.set(name, status)


async def _shutdown(started: list[Running], grace: float) -> None:
    for item in started:
        await item.health.enter_graceful_shutdown()
    await asyncio.gather(*(item.server.stop(grace) for item in started))
    for item in started:
        await item.service.stop()
        await item.health.set("", health_pb2.HealthCheckResponse.NOT_SERVING)
        log.info("service_stopped", service=item.service.name)


def stop_on_signals() -> asyncio.Event:
    """An event set by SIGTERM or SIGINT (Ctrl-C)."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    return stop

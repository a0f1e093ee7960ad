"""Run one or several services in this process until told to stop.

Shutdown order matters for clients: health turns NOT_SERVING first (load
balancers stop routing), then servers stop with a grace period (calls in
flight finish), then background tasks stop, then NATS drains and Redis closes.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from importlib import import_module

import grpc
from grpc_health.v1 import health_pb2
from grpc_health.v1._async import HealthServicer

from services.base import Service
from shared.config import Settings
from shared.logs import get_logger
from shared.rpc.server import create_server
from shared.runtime import open_runtime

SERVICE_NAMES = ("lobby", "engine", "arbiter", "scoring", "tournament")

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
                    f"{settings.bind_host}:{settings.ports[name]}", name, [service.full_name],
                    service.register, settings, health)
                started.append(Running(service, server, port, health))
                await service.start()
                log.info("service_started", service=name, port=port)
            yield started
        finally:
            await _shutdown(started, settings.grace_seconds)


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

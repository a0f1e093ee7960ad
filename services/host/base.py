"""What every service provides to the runner: its servicers and its background work; a room
hosted inside another service's process provides the same as a :class:`Part`."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, ClassVar

import grpc

from shared.infra.runtime import Runtime


class Service:
    """A service: gRPC servicers plus background tasks sharing one runtime. Subclasses set
    ``name``/``full_name``, implement :meth:`register`, and may start tasks in :meth:`start`."""

    name: ClassVar[str]
    full_name: ClassVar[str]
    #: Further proto services its servicers serve on the same port (health and reflection list them).
    also_serves: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def full_names(cls) -> list[str]:
        """Every proto service this service serves."""
        return [cls.full_name, *cls.also_serves]

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self._tasks: list[asyncio.Task[Any]] = []

    def register(self, server: grpc.aio.Server) -> None:
        """Add this service's servicers to the server."""
        raise NotImplementedError

    async def start(self) -> None:
        """Start background work (consumers, timers); default: none."""

    def spawn(self, coro: Coroutine[Any, Any, Any], name: str) -> None:
        """Run a background task until :meth:`stop`."""
        self._tasks.append(asyncio.create_task(coro, name=f"{self.name}:{name}"))

    async def stop(self) -> None:
        """Cancel background tasks and wait for them."""
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks.clear()


class Part:
    """A room hosted in another service's process: its servicers on that port, its background work
    started and stopped with that service. Not deployed on its own."""

    #: The proto service its servicers serve (the host lists it in ``also_serves``).
    full_name: ClassVar[str]

    def register(self, server: grpc.aio.Server) -> None:
        """Add this part's servicers to the host's server."""
        raise NotImplementedError

    async def start(self) -> None:
        """Start background work (consumers); default: none."""

    async def stop(self) -> None:
        """Stop background work; default: none."""

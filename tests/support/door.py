"""The door (services/host/door.py) in front of services running in the test's process, and a
relay that reaches it from another loopback address (no tests of its own)."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

from services.host.door import Door, with_door
from services.host.runner import Running, running_services
from shared.config import SERVICE_NAMES, Settings
from shared.sdk.client import Endpoints, StammtischClient


@dataclass
class OpenDoor:
    """Services of this process behind a real nginx."""

    door: Door
    running: list[Running]
    settings: Settings

    @property
    def address(self) -> str:
        """The door's "host:port"."""
        return self.door.address.removeprefix("grpcs://")

    @property
    def endpoints(self) -> Endpoints:
        """Every service through the door, trusting its development CA."""
        return Endpoints.door(self.address, Path(self.door.ca))


@contextlib.asynccontextmanager
async def door_in_front(settings: Settings, data_dir: Path, **changes: object) -> AsyncIterator[OpenDoor]:
    """Every service in this process (server bots without delay) behind a door on a free port,
    with development certificates in ``data_dir``; ``changes`` to the settings (door limits...)."""
    settings = with_door(dataclasses.replace(settings, door_port=0, bot_delay_seconds=0.0, **changes),
                         data_dir)
    async with running_services(settings, SERVICE_NAMES) as running:
        with Door(settings, data_dir) as door:
            door.open(settings, {item.service.name: item.port for item in running})
            yield OpenDoor(door, running, settings)


@contextlib.asynccontextmanager
async def client_from(opened: OpenDoor, source: str) -> AsyncIterator[StammtischClient]:
    """A client whose connections reach the door from the loopback address ``source``."""
    host, port = opened.address.rsplit(":", 1)
    async with SourceRelay(source, (host, int(port))).running() as relay, \
            StammtischClient(Endpoints.door(f"127.0.0.1:{relay.port}", Path(opened.door.ca))) as client:
        yield client


class SourceRelay:
    """Forwards TCP connections to ``upstream`` from the source address ``source`` (127.0.0.2...),
    so a test's client reaches a server as another machine would."""

    def __init__(self, source: str, upstream: tuple[str, int]) -> None:
        self.source = source
        self.upstream = upstream
        self.port = 0

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[SourceRelay]:
        server = await asyncio.start_server(self._connection, "127.0.0.1", 0)
        self.port = server.sockets[0].getsockname()[1]
        try:
            yield self
        finally:
            server.close()

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.upstream, local_addr=(self.source, 0))
        except OSError:
            writer.close()
            return
        await asyncio.gather(self._pipe(reader, up_writer), self._pipe(up_reader, writer))

    @staticmethod
    async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError):
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        with contextlib.suppress(ConnectionError, RuntimeError):
            writer.close()



"""A TCP proxy that plays a bad network between a client and a real server (no tests of its own)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator


class FaultyProxy:
    """Forwards bytes both ways until told to freeze (a vanished network: nothing passes, nothing
    closes) or to cut the reply to the next request containing some bytes (the server did the
    work, the client never hears of it)."""

    def __init__(self, host: str, port: int) -> None:
        self.upstream = (host, port)
        self.frozen = False
        self.cut_reply_to: bytes | None = None
        self.cuts = 0
        self.port = 0

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[FaultyProxy]:
        server = await asyncio.start_server(self._connection, "127.0.0.1", 0)
        self.port = server.sockets[0].getsockname()[1]
        try:
            yield self
        finally:
            self.frozen = False
            server.close()

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection(*self.upstream)
        armed = asyncio.Event()
        try:
            await asyncio.gather(self._pipe(reader, up_writer, armed, upstream=True),
                                 self._pipe(up_reader, writer, armed, upstream=False))
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            for w in (writer, up_writer):
                w.close()

    async def _pipe(self, source: asyncio.StreamReader, sink: asyncio.StreamWriter, armed: asyncio.Event,
                    upstream: bool) -> None:
        while data := await source.read(65536):
            while self.frozen:
                await asyncio.sleep(0.05)
            if upstream and self.cut_reply_to is not None and self.cut_reply_to in data:
                self.cut_reply_to = None
                armed.set()
            if not upstream and armed.is_set():
                self.cuts += 1
                raise ConnectionError("reply cut")
            sink.write(data)
            await sink.drain()
        sink.close()

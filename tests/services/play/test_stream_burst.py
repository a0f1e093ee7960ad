"""Thousands of streams opened at once over many connections all open (none CANCELLED).

grpc-core cancels new calls once more than 1,000 wait for the Python server
to take them up (its default pending-request limits); the soak step's 4,000
streams from 40 connections lost hundreds that way. The server's options
raise those limits (shared/rpc/server.py).
"""

from __future__ import annotations

import asyncio
import collections

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from shared.config import Settings
from shared.rpc.server import create_server
from shared.sdk.client import open_channel

CONNECTIONS = 40
STREAMS_EACH = 100


@pytest.mark.slow
async def test_a_burst_of_streams_over_many_connections_all_open() -> None:
    settings = Settings(token_secret="s" * 32)
    server, port = await create_server("127.0.0.1:0", "engine", [], lambda _server: None, settings)
    channels = [open_channel(f"127.0.0.1:{port}") for _ in range(CONNECTIONS)]
    opened = 0
    failed: collections.Counter[str] = collections.Counter()
    settled = asyncio.Event()

    def count(outcome: str | None) -> None:
        nonlocal opened
        if outcome is None:
            opened += 1
        else:
            failed[outcome] += 1
        if opened + sum(failed.values()) == CONNECTIONS * STREAMS_EACH:
            settled.set()

    async def watch(stub: health_pb2_grpc.HealthStub) -> None:
        try:
            async for _status in stub.Watch(health_pb2.HealthCheckRequest()):
                count(None)
        except grpc.aio.AioRpcError as err:
            count(err.code().name)
        except asyncio.CancelledError:  # how grpc.aio at times ends a call the server cancelled
            if not settled.is_set():
                count("CANCELLED")

    streams = [asyncio.create_task(watch(health_pb2_grpc.HealthStub(channel)))
               for channel in channels for _ in range(STREAMS_EACH)]
    try:
        await asyncio.wait_for(settled.wait(), 60)
        assert (opened, dict(failed)) == (CONNECTIONS * STREAMS_EACH, {})
    finally:
        for stream in streams:
            stream.cancel()
        await asyncio.gather(*streams, return_exceptions=True)
        await asyncio.gather(*(channel.close() for channel in channels))
        await server.stop(None)

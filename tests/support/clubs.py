"""Calls of the ClubsService for tests: ``rpc(client, "JoinClub", code=...)`` and the status of a
refused call. Not a test module."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import grpc
import pytest

from shared.api.stammtisch.v1 import clubs_pb2
from shared.sdk.client import StammtischClient


async def rpc(client: StammtischClient, method: str, **fields: Any) -> Any:
    """Call a ClubsService method as the client, the request built from ``fields``."""
    request = getattr(clubs_pb2, f"{method}Request")(**fields)
    return await getattr(client.clubs, method)(request, metadata=client.auth)


async def refused(client: StammtischClient, method: str, **fields: Any) -> grpc.StatusCode:
    """The status code of a call that must fail."""
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await rpc(client, method, **fields)
    return caught.value.code()


async def until(check: Callable[[], Awaitable[bool]], timeout: float = 10.0) -> None:
    """Wait for an async predicate to hold (fail after ``timeout`` seconds)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not await check():
        assert loop.time() < deadline, "timed out"
        await asyncio.sleep(0.05)

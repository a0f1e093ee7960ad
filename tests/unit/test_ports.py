"""Each service of a stack gets a port of its own.

CI once saw GetView answered UNIMPLEMENTED: the stack's engine and another of its services had
been handed the same "free" port, both bound it (SO_REUSEPORT), and the client's engine calls
reached the other server. Now free_port never repeats itself in a process, and only the workers
of `stammtisch up --workers N` share ports.
"""

from __future__ import annotations

import dataclasses

import grpc
import pytest

from shared.config import Settings
from shared.localinfra import free_port
from shared.rpc.server import create_server


def test_free_port_never_hands_out_a_port_twice() -> None:
    ports = [free_port() for _ in range(2_000)]  # the kernel alone repeated about 120 of them
    assert len(set(ports)) == len(ports)


async def _bind(port: int, settings: Settings) -> tuple[grpc.aio.Server, int]:
    return await create_server(f"127.0.0.1:{port}", "engine", [], lambda _server: None, settings)


async def test_a_server_does_not_share_a_taken_port() -> None:
    settings = Settings(token_secret="s" * 32)
    first, port = await _bind(0, settings)
    try:
        with pytest.raises((OSError, RuntimeError)):
            second, _ = await _bind(port, settings)
            await second.stop(None)
    finally:
        await first.stop(None)


async def test_the_workers_of_one_stack_share_their_ports() -> None:
    settings = dataclasses.replace(Settings(token_secret="s" * 32), share_ports=True)
    first, port = await _bind(0, settings)
    try:
        second, again = await _bind(port, settings)
        assert again == port
        await second.stop(None)
    finally:
        await first.stop(None)

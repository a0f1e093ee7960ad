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

from services.host.workers import shared_ports
from shared.config import Settings
from shared.infra import local as localinfra
from shared.infra.local import free_port
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


def test_workers_own_ports_are_none_of_the_ports_the_stack_was_given(monkeypatch: pytest.MonkeyPatch) -> None:
    """`up` picks each worker's table ports itself, while the ports its launcher gave it for the
    services may not be bound yet: the kernel would offer one of them again, and the workers
    (SO_REUSEPORT) would share it with that service."""
    given = Settings(ports={"lobby": 41001, "engine": 41002, "arbiter": 41003, "scoring": 41004,
                            "tournament": 41005}, metrics_port=41006)
    offered = iter([41002, 41006, 41003, 42001, 42002, 42003, 42004, 42005])

    class Probe:
        def __enter__(self) -> Probe:
            return self

        def __exit__(self, *_exc: object) -> None:
            pass

        def bind(self, _address: object) -> None:
            pass

        def getsockname(self) -> tuple[str, int]:
            return "127.0.0.1", next(offered)

    monkeypatch.setattr(localinfra.socket, "socket", Probe)
    monkeypatch.setattr(localinfra, "_handed_out", set())  # whatever other tests were handed
    settings, metrics = shared_ports(given, 2)
    picked = [port for ports in settings.table_ports.values() for port in ports] + metrics[1:]
    assert not set(picked) & {*given.ports.values(), given.metrics_port}, picked

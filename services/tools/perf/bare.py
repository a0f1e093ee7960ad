"""The bare cost of the parts, measured in the same run as the service figures."""

from __future__ import annotations

import asyncio
import multiprocessing
import time
from collections.abc import AsyncIterator, Callable
from multiprocessing.connection import Connection

import grpc
import nats
import redis.asyncio as aioredis
import uvloop
from grpc_health.v1 import health_pb2, health_pb2_grpc

from services.tools.perf.stats import Samples
from shared.infra.local import free_port


async def grpc_empty_call(address: str, count: int) -> Samples:
    """Round trips of the standard health Check: an empty unary gRPC call."""
    samples = Samples("empty gRPC call (health Check)")
    async with grpc.aio.insecure_channel(address) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        await stub.Check(health_pb2.HealthCheckRequest())
        for _ in range(count):
            started = time.perf_counter()
            await stub.Check(health_pb2.HealthCheckRequest())
            samples.add(time.perf_counter() - started)
    return samples


async def redis_round_trip(url: str, count: int) -> Samples:
    """PING round trips."""
    samples = Samples("Redis round trip (PING)")
    client = aioredis.from_url(url)
    try:
        for _ in range(count):
            started = time.perf_counter()
            await client.ping()
            samples.add(time.perf_counter() - started)
    finally:
        await client.aclose()
    return samples


#: The writes of a table commit (new head, log entry) without its checks.
_COMMIT_SHAPED = """
redis.call('HSET', KEYS[1], 'seq', ARGV[1], 'rec', ARGV[2])
redis.call('XADD', KEYS[2], ARGV[1] .. '-0', 'rec', ARGV[2])
return 1
"""


async def redis_commit_write(url: str, count: int, label: str) -> Samples:
    """Sequential commit-shaped writes (a 1 KB record into a hash and a stream), one script each."""
    samples = Samples(f"Redis commit-shaped write, {label}")
    client = aioredis.from_url(url)
    try:
        script = client.register_script(_COMMIT_SHAPED)
        record = b"x" * 1024
        for seq in range(1, count + 1):
            started = time.perf_counter()
            await script(keys=["bench:{t}:head", "bench:{t}:log"], args=[seq, record])
            samples.add(time.perf_counter() - started)
    finally:
        await client.aclose()
    return samples


async def nats_publish(url: str, count: int) -> Samples:
    """A publish confirmed by a flush (the server has it)."""
    samples = Samples("NATS publish + flush")
    client = await nats.connect(url)
    try:
        for index in range(count):
            started = time.perf_counter()
            await client.publish("bench.bare", str(index).encode())
            await client.flush()
            samples.add(time.perf_counter() - started)
    finally:
        await client.close()
    return samples


# -- the floor of one action's messages: gRPC alone ------------------------------------------------

#: The fan-out server's one method (raw bytes both ways: no protobuf, no logic).
FANOUT_METHOD = "/bench.Fanout/Play"


async def _fanout_serve(port: int, ready: Connection) -> None:
    """A gRPC server whose bidirectional streams join a group named by their first message;
    every later message on a stream goes to each stream of its group (the sender's too), as
    an action's commit reaches its table's four streams. A reader task per stream feeds
    the group's queues, as the services' Play streams do."""
    groups: dict[bytes, list[asyncio.Queue[bytes]]] = {}

    async def play(requests: AsyncIterator[bytes],
                   _context: grpc.aio.ServicerContext) -> AsyncIterator[bytes]:
        group = groups.setdefault(await anext(requests), [])
        queue: asyncio.Queue[bytes] = asyncio.Queue()
        group.append(queue)

        async def forward() -> None:
            async for message in requests:
                for member in group:
                    member.put_nowait(message)

        reader = asyncio.create_task(forward())
        try:
            while True:
                yield await queue.get()
        finally:
            reader.cancel()
            group.remove(queue)

    server = grpc.aio.server()
    server.add_generic_rpc_handlers([grpc.method_handlers_generic_handler(
        "bench.Fanout", {"Play": grpc.stream_stream_rpc_method_handler(play)})])
    server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    ready.send("ready")
    await server.wait_for_termination()


def _fanout_main(port: int, ready: Connection) -> None:
    """The fan-out server's process (uvloop, as the services)."""
    uvloop.run(_fanout_serve(port, ready))


async def _fanout_seat(address: str, group: bytes, until: float, counts: list[int]) -> None:
    """One client on a connection of its own: join, then send and wait for its own message
    back, as fast as it can, until ``until``."""
    async with grpc.aio.insecure_channel(address) as channel:
        call = channel.stream_stream(FANOUT_METHOD)()
        await call.write(group)
        mine = 0
        while time.perf_counter() < until:
            mine += 1
            token = b"%s:%d" % (group, mine)
            await call.write(token)
            while await call.read() != token:
                pass
            counts[0] += 1
        call.cancel()


async def grpc_fanout_cpu(groups: int, seats: int, seconds: float,
                          cpu_of: Callable[[int], float | None]) -> tuple[float, float | None]:
    """(messages sent per second, server CPU seconds per message sent; None where the system
    does not tell) of the bare fan-out server with ``groups`` groups of ``seats`` streams, each
    seat sending as fast as its own message comes back: one message in and ``seats`` out, as
    one action on a Play stream at a table of ``seats``."""
    context = multiprocessing.get_context("spawn")
    mine, theirs = context.Pipe()
    port = free_port()
    process = context.Process(target=_fanout_main, args=(port, theirs), daemon=True)
    process.start()
    try:
        if not mine.poll(30):
            raise RuntimeError("the fan-out server did not start")
        mine.recv()
        address = f"127.0.0.1:{port}"
        counts = [0]
        await asyncio.sleep(0.5)
        until = time.perf_counter() + seconds
        seats_of = [_fanout_seat(address, b"g%d" % group, until, counts)
                    for group in range(groups) for _ in range(seats)]
        assert process.pid is not None
        before = cpu_of(process.pid)
        started = time.perf_counter()
        await asyncio.gather(*seats_of)
        elapsed = time.perf_counter() - started
        after = cpu_of(process.pid)
        spent = None if before is None or after is None else (after - before) / max(1, counts[0])
        return counts[0] / elapsed, spent
    finally:
        process.kill()
        process.join()

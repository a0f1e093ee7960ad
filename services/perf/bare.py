"""The bare cost of the parts, measured in the same run as the service figures."""

from __future__ import annotations

import time

import grpc
import nats
import redis.asyncio as aioredis
from grpc_health.v1 import health_pb2, health_pb2_grpc

from services.perf.stats import Samples


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

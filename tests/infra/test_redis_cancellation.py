"""A task cancelled while it waits for Redis is cancelled: no command swallows the CancelledError.

redis-py 8.1 writes each command under ``asyncio.wait_for``, which on Python 3.11
returns instead of raising when the cancellation and the write's end meet in one
loop turn: about a quarter of these cancellations were lost (a Subscribe stream
of a client behind a silent network then stayed open for good).
"""

from __future__ import annotations

import asyncio
import random

import pytest

from shared.infra.runtime import Runtime

pytestmark = pytest.mark.integration

ROUNDS = 400


async def test_a_cancellation_during_a_command_always_reaches_the_caller(runtime: Runtime) -> None:
    key = runtime.key("cancel-test")
    await runtime.redis.xadd(key, {"field": "value"})
    rng = random.Random(7)
    lost = 0
    for _ in range(ROUNDS):
        async def read_then_wait() -> str:
            await runtime.redis.xrange(key, "-", "+", count=10)
            await asyncio.sleep(0.05)  # far longer than the cancellation takes to arrive
            return "went on"

        task = asyncio.create_task(read_then_wait())
        await asyncio.sleep(rng.random() * 0.0005)  # lands in the command most of the time
        task.cancel()
        try:
            await task
            lost += 1
        except asyncio.CancelledError:
            pass
    await runtime.redis.delete(key)
    assert lost == 0, f"{lost} of {ROUNDS} cancellations were swallowed by a Redis command"

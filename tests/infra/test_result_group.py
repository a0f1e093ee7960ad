"""Replicas that start at the same moment all join the one durable consumer of game results.

Both could find no consumer and both create it; JetStream refused the second
("consumer name already in use"), and a worker of `stammtisch up --workers N`
died before it was up.
"""

from __future__ import annotations

import asyncio
import contextlib

import pytest
from nats.aio.msg import Msg

from shared.config import Settings
from shared.infra.result_group import join_results
from shared.infra.runtime import open_runtime

pytestmark = pytest.mark.integration
REPLICAS = 4


async def _ignore(_message: Msg) -> None:
    return None


@pytest.mark.parametrize("durable", ["race-a", "race-b", "race-c"])
async def test_replicas_starting_at_once_all_join_one_consumer(settings: Settings, durable: str) -> None:
    async with contextlib.AsyncExitStack() as stack:
        runtimes = [await stack.enter_async_context(open_runtime(settings)) for _ in range(REPLICAS)]
        joined = await asyncio.gather(*(join_results(runtime, durable, 5.0, _ignore) for runtime in runtimes))
        try:
            infos = {(await sub.consumer_info()).name for sub in joined}
            assert infos == {durable}
        finally:
            for sub in joined:
                await sub.unsubscribe()

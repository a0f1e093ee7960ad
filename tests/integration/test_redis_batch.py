"""Script calls made in one turn of the loop share one pipeline, and each still gets its own
answer: its reply, its error, a script Redis forgot loaded again, a cancelled caller alone."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import redis.exceptions

from shared.redis_batch import BatchedScript
from shared.runtime import Runtime

pytestmark = pytest.mark.integration

#: Appends ARGV[1] to the list KEYS[1] and answers its length; a non-number ARGV[2] is an error.
_SCRIPT = """
local n = tonumber(ARGV[2])
if not n then return redis.error_reply('not a number: ' .. ARGV[2]) end
return redis.call('RPUSH', KEYS[1], ARGV[1]) + n
"""


class CountedPipelines:
    """Counts the pipelines a client opens (the real ones: it only passes them on)."""

    def __init__(self, runtime: Runtime, monkeypatch: pytest.MonkeyPatch) -> None:
        self.opened = 0
        pipeline = runtime.redis.pipeline

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.opened += 1
            return pipeline(*args, **kwargs)

        monkeypatch.setattr(runtime.redis, "pipeline", counted)


async def test_calls_in_one_turn_go_as_one_pipeline_each_with_its_reply(
        runtime: Runtime, monkeypatch: pytest.MonkeyPatch) -> None:
    script = BatchedScript(runtime.redis, _SCRIPT)
    pipelines = CountedPipelines(runtime, monkeypatch)
    keys = [runtime.key(f"batch-{index}") for index in range(20)]
    replies = await asyncio.gather(*(script([key], ["x", index]) for index, key in enumerate(keys)))
    assert replies == [1 + index for index in range(20)]
    assert pipelines.opened == 1  # the first went at once, the 19 others together
    assert [await runtime.redis.lrange(key, 0, -1) for key in keys] == [[b"x"]] * 20
    assert await script([keys[0]], ["y", 0]) == 2  # alone: the plain call, no pipeline
    assert pipelines.opened == 1


async def test_a_failing_call_fails_alone(runtime: Runtime) -> None:
    script = BatchedScript(runtime.redis, _SCRIPT)
    key = runtime.key("batch-errors")
    results = await asyncio.gather(script([key], ["a", 0]), script([key], ["b", "zero"]),
                                   script([key], ["c", 0]), return_exceptions=True)
    assert results[0] == 1 and results[2] == 2
    assert isinstance(results[1], redis.exceptions.ResponseError) and "not a number" in str(results[1])


async def test_a_script_redis_forgot_is_loaded_again(runtime: Runtime) -> None:
    script = BatchedScript(runtime.redis, _SCRIPT)
    key = runtime.key("batch-flushed")
    assert await script([key], ["a", 0]) == 1
    await runtime.redis.script_flush()  # as after a restart without persistence
    assert await asyncio.gather(script([key], ["b", 0]), script([key], ["c", 0])) == [2, 3]


@pytest.mark.parametrize("cancelled", [1, 2])
async def test_a_cancelled_caller_leaves_the_others_their_replies(runtime: Runtime, cancelled: int) -> None:
    """The first call goes at once (nothing is on its way); the next leads a batch for the
    rest of the turn: cancelled before it is sent, it is not sent and the others go without it;
    a later one was sent with the batch all the same (the commit script is safe to try again)."""
    script = BatchedScript(runtime.redis, _SCRIPT)
    keys = [runtime.key(f"batch-cancel-{cancelled}-{index}") for index in range(4)]
    calls = [asyncio.ensure_future(script([key], ["x", 0])) for key in keys]
    await asyncio.sleep(0)  # the first is on its way, the others in one batch
    calls[cancelled].cancel()
    done = await asyncio.gather(*calls, return_exceptions=True)
    assert isinstance(done[cancelled], asyncio.CancelledError)
    assert [done[index] for index in range(4) if index != cancelled] == [1, 1, 1]
    assert await runtime.redis.llen(keys[cancelled]) == (0 if cancelled == 1 else 1)

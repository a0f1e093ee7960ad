"""Script calls made while a round trip is on its way share the next one, and each still gets
its own answer: its reply, its error, a script Redis forgot loaded again, a cancelled caller
alone; a connection dropped under it is ridden out."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import redis.exceptions

from shared.infra.redis_batch import BatchedScript
from shared.infra.runtime import Runtime

pytestmark = pytest.mark.integration

#: Appends ARGV[1] to the list KEYS[1] and answers its length; a non-number ARGV[2] is an error.
_SCRIPT = """
local n = tonumber(ARGV[2])
if not n then return redis.error_reply('not a number: ' .. ARGV[2]) end
return redis.call('RPUSH', KEYS[1], ARGV[1]) + n
"""


class CountedRoundTrips:
    """Counts a script's round trips to Redis and the calls each carried."""

    def __init__(self, script: BatchedScript, monkeypatch: pytest.MonkeyPatch) -> None:
        self.sizes: list[int] = []
        round_trip = script._round_trip

        async def counted(calls: list[Any]) -> list[Any]:
            self.sizes.append(len(calls))
            return await round_trip(calls)

        monkeypatch.setattr(script, "_round_trip", counted)


async def test_calls_made_meanwhile_go_as_one_round_trip_each_with_its_reply(
        runtime: Runtime, monkeypatch: pytest.MonkeyPatch) -> None:
    script = BatchedScript(runtime.redis, _SCRIPT)
    trips = CountedRoundTrips(script, monkeypatch)
    keys = [runtime.key(f"batch-{index}") for index in range(20)]
    replies = await asyncio.gather(*(script([key], ["x", index]) for index, key in enumerate(keys)))
    assert replies == [1 + index for index in range(20)]
    assert trips.sizes == [1, 19]  # the first went at once, the 19 others together once it was back
    assert [await runtime.redis.lrange(key, 0, -1) for key in keys] == [[b"x"]] * 20
    assert await script([keys[0]], ["y", 0]) == 2  # alone: at once, by itself
    assert trips.sizes == [1, 19, 1]


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


@pytest.mark.parametrize("cancelled", [0, 2])
async def test_a_cancelled_caller_leaves_the_others_their_replies(runtime: Runtime, cancelled: int) -> None:
    """The first call goes at once (nothing is on its way), the others wait for it to come back:
    one of them cancelled meanwhile is not sent, and the others go without it; the first,
    cancelled once sent, still runs (the commit script is safe to try again)."""
    script = BatchedScript(runtime.redis, _SCRIPT)
    keys = [runtime.key(f"batch-cancel-{cancelled}-{index}") for index in range(4)]
    calls = [asyncio.ensure_future(script([key], ["x", 0])) for key in keys]
    await asyncio.sleep(0)  # the first is on its way, the others wait
    calls[cancelled].cancel()
    done = await asyncio.gather(*calls, return_exceptions=True)
    assert isinstance(done[cancelled], asyncio.CancelledError)
    assert [done[index] for index in range(4) if index != cancelled] == [1, 1, 1]
    await asyncio.sleep(0.1)
    assert await runtime.redis.llen(keys[cancelled]) == (1 if cancelled == 0 else 0)
    assert await script([keys[3]], ["y", 0]) == 2  # nothing is left waiting or busy


async def test_a_connection_dropped_under_the_script_is_ridden_out(runtime: Runtime) -> None:
    """Redis closing the script's connection (as a restart does) costs a reconnect, not a call."""
    script = BatchedScript(runtime.redis, _SCRIPT)
    key = runtime.key("batch-dropped")
    assert await script([key], ["a", 0]) == 1
    await runtime.redis.client_kill_filter(_type="normal", skipme=True)
    assert await asyncio.gather(script([key], ["b", 0]), script([key], ["c", 0])) == [2, 3]


async def test_round_trips_keep_one_connection_which_the_pool_still_closes(runtime: Runtime) -> None:
    """Round trips go one after another on one borrowed connection; closing the client's pool
    closes it too, and the next call connects again."""
    script = BatchedScript(runtime.redis, _SCRIPT)
    key = runtime.key("batch-kept")
    assert await script([key], ["a", 0]) == 1
    kept = script._connection
    assert kept is not None and kept.is_connected
    assert await asyncio.gather(*(script([key], ["b", 0]) for _ in range(5))) == [2, 3, 4, 5, 6]
    assert script._connection is kept
    await runtime.redis.connection_pool.disconnect()
    assert not kept.is_connected
    assert await script([key], ["c", 0]) == 7
    assert kept.is_connected

"""One Lua script called by many at once, sent to Redis as one pipeline per turn of the loop.

Every table commit is one script call. When many tables commit at the same
time (a tournament's hundred tables), each call paid for its own socket write
and read: in the bench's profile the write alone took 7% of the server's CPU,
more than all of redis-py's own work. Calls made while the event loop runs
one round of callbacks are collected here and go out together on the next
round, as one pipeline (one write, one read). A pipeline is not a
transaction: each script stays atomic on its own, run in the order called;
two commits of one table in a batch race as they would apart (the
compare-and-set lets the first win, the other runs again on the new head).

A call made while none is on its way goes at once (so a lightly loaded
server waits for nothing); the others wait for at most one turn of the loop,
and a batch of one is the plain script call, made by its caller. Redis
Cluster clients call the script directly: redis-py's cluster pipelines
refuse scripts (and a batch would span nodes anyway). If the connection
fails, every call of the batch gets the error, as each would have on its own
(and redis-py retries a pipeline as it retries a command).
A cancelled caller only stops waiting: its call, once sent, still runs, which
the commit script allows (its compare-and-set and action ids make a commit
whose answer was lost safe to try again).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import redis.asyncio as aioredis
from redis.asyncio.cluster import RedisCluster
from redis.exceptions import NoScriptError

Call = tuple[Sequence[Any], Sequence[Any], "asyncio.Future[Any]"]


class BatchedScript:
    """A registered script whose calls in one turn of the loop share one round trip."""

    def __init__(self, redis: aioredis.Redis, source: str) -> None:
        self.redis = redis
        self.script = redis.register_script(source)
        self._batching = not isinstance(redis, RedisCluster)
        #: The calls of the batch forming in this turn of the loop (None: none is).
        self._forming: list[Call] | None = None
        #: The batches on their way (the loop keeps only weak references to tasks).
        self._sending: set[asyncio.Task[None]] = set()
        #: Calls sent and not yet answered.
        self._in_flight = 0

    async def __call__(self, keys: Sequence[Any], args: Sequence[Any]) -> Any:
        """The script's reply to ``keys`` and ``args``, as ``script(keys=, args=)`` gives it.

        With nothing on its way, a call goes at once (light load: no wait at all). Otherwise
        the first call of a turn opens a batch and lets the loop run the rest of the turn;
        alone then, it calls the script itself; else a task sends the batch and every call
        waits for its reply.
        """
        if not self._batching or (self._in_flight == 0 and self._forming is None):
            return await self._alone(keys, args)
        loop = asyncio.get_running_loop()
        reply: asyncio.Future[Any] = loop.create_future()
        if self._forming is not None:
            self._forming.append((keys, args, reply))
            return await reply
        batch = self._forming = [(keys, args, reply)]
        try:
            await asyncio.sleep(0)  # the other calls of this turn join the batch
        except asyncio.CancelledError:
            self._forming = None
            if len(batch) > 1:
                self._send(batch[1:])
            raise
        self._forming = None
        if len(batch) == 1:
            return await self._alone(keys, args)
        self._send(batch)
        return await reply

    async def _alone(self, keys: Sequence[Any], args: Sequence[Any]) -> Any:
        self._in_flight += 1
        try:
            return await self.script(keys=keys, args=args)
        finally:
            self._in_flight -= 1

    def _send(self, batch: list[Call]) -> None:
        task = asyncio.ensure_future(self._run(batch))
        self._sending.add(task)
        task.add_done_callback(self._sending.discard)

    async def _run(self, batch: list[Call]) -> None:
        self._in_flight += len(batch)
        try:
            replies = await self._replies(batch)
        except Exception as exc:  # noqa: BLE001 - every caller of the batch gets it
            replies = [exc] * len(batch)
        finally:
            self._in_flight -= len(batch)
        for (_keys, _args, reply), value in zip(batch, replies, strict=True):
            if reply.done():  # its caller was cancelled
                continue
            if isinstance(value, Exception):
                reply.set_exception(value)
            else:
                reply.set_result(value)

    async def _replies(self, batch: list[Call]) -> list[Any]:
        """Each call's reply or error, in order."""
        if len(batch) == 1:
            keys, args, _reply = batch[0]
            return [await self.script(keys=keys, args=args)]
        async with self.redis.pipeline(transaction=False) as pipe:
            for keys, args, _reply in batch:
                pipe.evalsha(self.script.sha, len(keys), *keys, *args)
            replies: list[Any] = await pipe.execute(raise_on_error=False)
        for index, value in enumerate(replies):
            if isinstance(value, NoScriptError):  # Redis restarted without it: loads it again
                keys, args, _reply = batch[index]
                try:
                    replies[index] = await self.script(keys=keys, args=args)
                except Exception as exc:  # noqa: BLE001 - this call's own error
                    replies[index] = exc
        return replies

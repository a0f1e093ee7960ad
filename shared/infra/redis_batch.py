"""One Lua script called by many at once: while one round trip is on its way, the calls made
meanwhile wait and go together as the next one (one write, one read).

A call made while nothing is on its way goes at once from its caller, so a lightly loaded
server waits for nothing; calls made meanwhile leave together as soon as the round trip is
back, so batches grow with load and no call waits for a timer. Round trips go one after the
other over one connection kept from the client's pool, every call packed as an EVALSHA (by
hiredis) and sent under the client's retry policy. A batch is not a transaction: each script
stays atomic on its own, in call order, and an error reply is its call's own. A queued caller
cancelled before its batch leaves is not sent; once sent, its call still runs (the commit
script makes a repeated commit safe). Redis Cluster clients call the script directly (a batch
would span nodes).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import redis.asyncio as aioredis
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.connection import Connection
from redis.exceptions import NoScriptError, ResponseError

Call = tuple[Sequence[Any], Sequence[Any], "asyncio.Future[Any]"]


class BatchedScript:
    """A registered script whose calls made during one round trip share the next one."""

    def __init__(self, redis: aioredis.Redis, source: str) -> None:
        self.redis = redis
        self.script = redis.register_script(source)
        self._batching = not isinstance(redis, RedisCluster)
        #: Calls waiting for the round trip on its way to come back.
        self._waiting: list[Call] = []
        #: A round trip is on its way (from a caller or from the sender task).
        self._busy = False
        #: The task sending the waiting calls (the loop keeps only weak references to tasks).
        self._sender: asyncio.Task[None] | None = None
        #: The pool's connection every round trip uses, once borrowed.
        self._connection: Connection | None = None

    async def __call__(self, keys: Sequence[Any], args: Sequence[Any]) -> Any:
        """The script's reply to ``keys`` and ``args``, as ``script(keys=, args=)`` gives it."""
        if not self._batching:
            return await self.script(keys=keys, args=args)
        if self._busy:
            reply: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
            self._waiting.append((keys, args, reply))
            return await reply
        self._busy = True
        try:
            [value] = await self._round_trip([(keys, args)])
        finally:
            self._pass_on()
        if isinstance(value, Exception):
            raise value
        return value

    def _pass_on(self) -> None:
        """A round trip is back: the calls that queued meanwhile go next, from a task."""
        if self._waiting:
            self._sender = asyncio.ensure_future(self._send_waiting())
        else:
            self._busy = False

    async def _send_waiting(self) -> None:
        try:
            while self._waiting:
                batch = [call for call in self._waiting if not call[2].done()]  # done: cancelled
                self._waiting = []
                if not batch:
                    continue
                try:
                    replies = await self._round_trip([(keys, args) for keys, args, _reply in batch])
                except Exception as exc:  # noqa: BLE001 - every caller of the batch gets it
                    replies = [exc] * len(batch)
                for (_keys, _args, reply), value in zip(batch, replies, strict=True):
                    if reply.done():  # its caller was cancelled meanwhile
                        continue
                    if isinstance(value, Exception):
                        reply.set_exception(value)
                    else:
                        reply.set_result(value)
        finally:
            self._busy = False
            for _keys, _args, reply in self._waiting:  # only if this task itself was cancelled
                reply.cancel()
            self._waiting = []

    async def _round_trip(self, calls: list[tuple[Sequence[Any], Sequence[Any]]]) -> list[Any]:
        """Each call's reply or error reply, in order (a connection that stays down raises)."""
        if self._connection is None:
            self._connection = await self.redis.connection_pool.get_connection()
        connection = self._connection
        commands = [("EVALSHA", self.script.sha, len(keys), *keys, *args) for keys, args in calls]

        async def send_and_read() -> list[Any]:
            await connection.send_packed_command(connection.pack_commands(commands))
            replies: list[Any] = []
            for _command in commands:
                try:
                    replies.append(await connection.read_response())
                except ResponseError as err:  # this call's own error; the others' replies follow
                    replies.append(err)
            return replies

        async def reconnect(_error: Exception) -> None:
            await connection.disconnect()

        replies = await connection.retry.call_with_retry(send_and_read, reconnect)
        for index, value in enumerate(replies):
            if isinstance(value, NoScriptError):  # Redis restarted without it: loads it again
                keys, args = calls[index]
                try:
                    replies[index] = await self.script(keys=keys, args=args)
                except Exception as exc:  # noqa: BLE001 - this call's own error
                    replies[index] = exc
        return replies

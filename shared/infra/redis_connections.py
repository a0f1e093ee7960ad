"""The connection classes this project's Redis clients use: each mends one flaw of redis-py 8.1,
and all pack commands with hiredis.

Both rely on internals of the pinned redis-py (``socket_timeout`` and
``_send_packed_command`` of its asyncio Connection); tests/infra/test_redis_client.py
and tests/infra/test_redis_cancellation.py say when an upgrade breaks them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

import hiredis
import redis.asyncio as aioredis
import redis.exceptions


class CancellableConnection(aioredis.Connection):
    """A connection whose writes never swallow the caller's cancellation (they run under
    ``asyncio.timeout``, not redis-py's ``wait_for``, which on Python 3.11 can return instead of
    raising), and whose commands are packed by hiredis instead of in Python."""

    def pack_command(self, *args: Any) -> list[bytes]:
        """The command in the Redis protocol, as redis-py's own packer would write it (a name of
        several words, such as "SCRIPT LOAD", is split into them)."""
        name = args[0].encode() if isinstance(args[0], str) else bytes(args[0])
        packed = tuple(name.split()) + tuple(
            bytes(arg) if isinstance(arg, (bytearray, memoryview)) else arg for arg in args[1:])
        try:
            return [hiredis.pack_command(packed)]
        except TypeError as err:  # None, or a type Redis has no form for: redis-py's error
            raise redis.exceptions.DataError(str(err)) from err

    async def send_packed_command(self, command: Any, check_health: bool = True) -> None:
        limit: float | None = self.socket_timeout  # type: ignore[has-type]
        if not limit:
            await super().send_packed_command(command, check_health)
            return
        # Without a socket timeout redis-py writes directly; the connection serves one
        # command at a time (the pool lends it out), so nothing else reads the field meanwhile.
        self.socket_timeout = None
        try:
            async with asyncio.timeout(limit):
                await super().send_packed_command(command, check_health)
        except TimeoutError:
            raise redis.exceptions.TimeoutError("Timeout writing to socket") from None
        finally:
            self.socket_timeout = limit


class ClusterConnection(CancellableConnection):
    """A cluster node's connection that reports a socket closed under it as ConnectionError, which the
    client retries (redis-py's asyncio cluster client disconnects every connection of a failed node,
    and a call still using one would otherwise raise AttributeError)."""

    async def _send_packed_command(self, command: Iterable[bytes]) -> None:
        if self._writer is None:
            raise redis.exceptions.ConnectionError("the connection was closed while in use")
        await super()._send_packed_command(command)

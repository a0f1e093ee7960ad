"""The connection classes this project's Redis clients use: each mends one flaw of redis-py 8.1,
and all pack commands with hiredis.

Both rely on internals of the pinned redis-py (``socket_timeout`` and
``_send_packed_command`` of its asyncio Connection); tests/unit/test_redis_client.py
and tests/integration/test_redis_cancellation.py say when an upgrade breaks them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

import hiredis
import redis.asyncio as aioredis
import redis.exceptions


class CancellableConnection(aioredis.Connection):
    """A connection whose writes never swallow the caller's cancellation, and whose commands
    are packed by hiredis.

    redis-py's asyncio connection packs every command in Python, argument by
    argument (its sync one uses hiredis): 20 microseconds for a table commit's
    script call, a tenth of all the Redis client's work per action, against 4.5
    with hiredis.

    redis-py sends every command under ``asyncio.wait_for`` when a socket timeout is
    set. On Python 3.11 ``wait_for`` returns the result instead of raising when the
    caller is cancelled in the same loop turn as the write finishes, which is common:
    a quarter of the cancellations that hit a command were lost that way. The task
    then went on as if never cancelled; a stream whose client had left kept its feed
    (and the open-streams gauge) until the process stopped. Here the write runs under
    ``asyncio.timeout``, which counts cancellations, with the same limit; it also
    spares the task ``wait_for`` starts for every command.
    """

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
    """A cluster node's connection that reports a socket closed under it as ConnectionError.

    redis-py 8.1's asyncio cluster client disconnects every connection of a node that
    failed, also one another call is using; that call then writes to no socket and an
    AttributeError escapes instead of the ConnectionError the client would retry.
    """

    async def _send_packed_command(self, command: Iterable[bytes]) -> None:
        if self._writer is None:
            raise redis.exceptions.ConnectionError("the connection was closed while in use")
        await super()._send_packed_command(command)

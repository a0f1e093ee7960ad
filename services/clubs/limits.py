"""Rate limits per player that hold across replicas: a counter per window in Redis."""

from __future__ import annotations

import time

import grpc

from services.clubs.keys import Keys
from shared.rpc.errors import ServiceError

#: name -> (calls, window seconds): friend requests, invitations, chat lines, code guesses.
LIMITS: dict[str, tuple[int, int]] = {
    "friend": (30, 3600), "invite": (60, 3600), "chat": (10, 10), "code": (10, 60),
    "club": (10, 3600),
}


class Limits:
    """Fixed-window counters: ``check`` raises RESOURCE_EXHAUSTED past the window's allowance."""

    def __init__(self, keys: Keys, limits: dict[str, tuple[int, int]] | None = None) -> None:
        self.keys = keys
        self.limits = limits or LIMITS

    async def check(self, kind: str, player_id: str) -> None:
        """Count one call of ``kind`` by the player; refuse it past the limit."""
        calls, window = self.limits[kind]
        slot = int(time.time() // window)
        key = self.keys.player(player_id, f"limit-{kind}-{slot}")
        async with self.keys.runtime.redis.pipeline(transaction=True) as pipe:
            pipe.incr(key)
            pipe.expire(key, window + 1)
            count, _ = await pipe.execute()
        if int(count) > calls:
            raise ServiceError(grpc.StatusCode.RESOURCE_EXHAUSTED,
                               f"too many {kind} requests: at most {calls} per {window} s; try later")

"""Player names in Redis, so any service can show who sits where."""

from __future__ import annotations

from shared.infra.runtime import Runtime

#: Shown when a name has expired with its login.
UNKNOWN_NAME = "Player"


class PlayerNames:
    """``<prefix>:player:<id>`` hashes with the display name of each login."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    def key(self, player_id: str) -> str:
        """The player's hash."""
        return self.runtime.key("player", player_id)

    async def remember(self, player_id: str, name: str, ttl_seconds: int) -> None:
        """Store the name for as long as the login's token lives."""
        key = self.key(player_id)
        async with self.runtime.redis.pipeline(transaction=True) as pipe:
            pipe.hset(key, "name", name)
            pipe.expire(key, ttl_seconds)
            await pipe.execute()

    async def names(self, player_ids: list[str]) -> list[str]:
        """Names of several players, in order."""
        async with self.runtime.redis.pipeline(transaction=False) as pipe:
            for player_id in player_ids:
                pipe.hget(self.key(player_id), "name")
            found = await pipe.execute()
        return [raw.decode() if raw else UNKNOWN_NAME for raw in found]

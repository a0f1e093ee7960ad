"""Friends, requests and blocks, and presence.

Each player has one hash of relations (other player -> state and since); a relation between
two players is written on both sides, each side idempotently, so a call retried after a crash
between the two writes completes it. Presence is a hash of the player's open inbox streams,
each with its expiry (refreshed while open), and the table the player said it sits at.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from services.clubs.keys import Keys

FRIEND, SENT, RECEIVED, BLOCKED = "friend", "sent", "received", "blocked"
#: Relations per player (friends, requests and blocks together).
MAX_RELATIONS = 1000
#: An open stream says the player is online for this long; it refreshes well before.
PRESENCE_TTL = 30.0
#: The table a player said it is at is forgotten after this long without a new word.
AT_TABLE_TTL = 6 * 3600


@dataclass(frozen=True)
class Relation:
    """What ``other`` is to a player, since when."""

    other: str
    state: str
    since: float


class Friends:
    """Relations and presence in Redis."""

    def __init__(self, keys: Keys) -> None:
        self.keys = keys
        self.redis = keys.runtime.redis

    def _key(self, player_id: str) -> str:
        return self.keys.player(player_id, "relations")

    async def relation(self, player_id: str, other: str) -> str | None:
        """The state of ``other`` for the player (None: no relation)."""
        raw = await self.redis.hget(self._key(player_id), other)
        return raw.decode().split(":", 1)[0] if raw else None

    async def count(self, player_id: str) -> int:
        """How many relations the player has."""
        return int(await self.redis.hlen(self._key(player_id)))

    async def set(self, player_id: str, other: str, state: str | None) -> None:
        """Set (None: remove) the state of ``other`` for the player."""
        if state is None:
            await self.redis.hdel(self._key(player_id), other)
        else:
            await self.redis.hset(self._key(player_id), other, f"{state}:{time.time()}")

    async def all(self, player_id: str) -> list[Relation]:
        """Every relation of the player, by the other's id."""
        raw = await self.redis.hgetall(self._key(player_id))
        relations = []
        for other, value in raw.items():
            state, since = value.decode().split(":", 1)
            relations.append(Relation(other.decode(), state, float(since)))
        return sorted(relations, key=lambda r: r.other)

    async def blocked_by(self, player_id: str, other: str) -> bool:
        """Whether ``other`` has blocked the player."""
        return await self.relation(other, player_id) == BLOCKED

    async def are_friends(self, player_id: str, other: str) -> bool:
        """Whether the two are friends."""
        return await self.relation(player_id, other) == FRIEND

    async def forget(self, player_id: str) -> None:
        """Remove the player from every relation, both sides (account deletion)."""
        for relation in await self.all(player_id):
            await self.set(relation.other, player_id, None)
        await self.redis.delete(self._key(player_id), self.keys.player(player_id, "presence"),
                                self.keys.player(player_id, "at"))

    async def stream_open(self, player_id: str, stream_id: str) -> None:
        """An inbox stream is open (called again every PRESENCE_TTL / 3)."""
        await self.redis.hset(self.keys.player(player_id, "presence"), stream_id, time.time() + PRESENCE_TTL)

    async def stream_closed(self, player_id: str, stream_id: str) -> None:
        """An inbox stream ended."""
        await self.redis.hdel(self.keys.player(player_id, "presence"), stream_id)

    async def set_table(self, player_id: str, table_id: str) -> None:
        """The table the player is at ('' for none)."""
        key = self.keys.player(player_id, "at")
        if table_id:
            await self.redis.set(key, table_id, ex=AT_TABLE_TTL)
        else:
            await self.redis.delete(key)

    async def presence(self, player_ids: list[str]) -> list[tuple[bool, str]]:
        """(online, table id) of each player: online while any stream of it is open."""
        now = time.time()
        async with self.redis.pipeline(transaction=False) as pipe:
            for player_id in player_ids:
                pipe.hvals(self.keys.player(player_id, "presence"))
                pipe.get(self.keys.player(player_id, "at"))
            found = await pipe.execute()
        result = []
        for expiries, table in zip(found[::2], found[1::2], strict=True):
            online = any(float(expiry) > now for expiry in expiries)
            result.append((online, table.decode() if online and table else ""))
        return result

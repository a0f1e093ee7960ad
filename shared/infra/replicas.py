"""Acknowledge a write only once a replica holds it (Redis WAIT), so a failover cannot lose it.

Redis replicates asynchronously, so for the writes a player or a result relies on (a table
commit, a recorded result) the service asks for a replica's copy before it answers. WAIT counts
the writes of its own connection, so it follows a barrier key in the same slot in one pipeline:
the replication stream is ordered, so a replica holding the barrier holds every earlier write.
When no replica answers within the wait, the write is acknowledged anyway and counted
(``stammtisch_redis_unreplicated_writes_total``), and that master's writes are not waited for
until INFO shows a replica online again: availability over a second copy
(shared/infra/README.md, "What can be lost").
"""

from __future__ import annotations

from typing import Any

import redis.asyncio as aioredis
import redis.exceptions
from redis.asyncio.cluster import RedisCluster

from shared.obs.logs import get_logger
from shared.obs.metrics import REDIS_UNREPLICATED

log = get_logger("replicas")

#: The barrier key lives this long after the last wait on it.
BARRIER_TTL_MS = 60_000


def slot_tag(key: str) -> str:
    """The part of ``key`` that Redis Cluster hashes: its hash tag, or the whole key."""
    start = key.find("{")
    if start >= 0:
        end = key.find("}", start + 1)
        if end > start + 1:
            return key[start + 1:end]
    return key


class ReplicaWait:
    """Waits for a replica's copy of what was written to a key's master."""

    def __init__(self, redis: aioredis.Redis, barrier_prefix: str, wait_ms: int) -> None:
        self.redis = redis
        self.barrier_prefix = barrier_prefix
        self.wait_ms = wait_ms
        self._unreplicated: set[str] = set()

    async def after(self, key: str) -> None:
        """Return once a replica has every write made so far to ``key``'s master (or no
        replica is in sync, see above). Raises ConnectionError when the master is gone: the
        caller's write may then be lost, so it must not be acknowledged."""
        if self.wait_ms <= 0:
            return
        barrier = f"{self.barrier_prefix}:{{{slot_tag(key)}}}"
        target: dict[str, Any] = {}
        name = ""
        try:
            if isinstance(self.redis, RedisCluster):
                await self.redis.initialize()  # a no-op once the client knows the cluster
                node = self.redis.get_node_from_key(barrier)
                target, name = {"target_nodes": node}, node.name
            if name in self._unreplicated:
                if not await self._replica_online(target):
                    REDIS_UNREPLICATED.inc()
                    return
                self._unreplicated.discard(name)
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.set(barrier, b"1", px=BARRIER_TTL_MS)
                pipe.execute_command("WAIT", 1, self.wait_ms, **target)
                _set, acked = await pipe.execute()
        except (redis.exceptions.RedisError, redis.exceptions.RedisClusterException, AttributeError) as exc:
            # AttributeError: redis-py's cluster pipeline on a connection that a dying node
            # closed under it. Either way nobody confirmed a copy: not acknowledged.
            raise redis.exceptions.ConnectionError(f"no replica confirmed the write: {exc!r}") from exc
        if int(acked) < 1:
            self._unreplicated.add(name)
            REDIS_UNREPLICATED.inc()
            log.warning("redis_write_unreplicated", master=name or "redis", wait_ms=self.wait_ms)

    async def _replica_online(self, target: dict[str, Any]) -> bool:
        """Whether the master has a replica that is online (and will be worth waiting for)."""
        info = await self.redis.execute_command("INFO", "replication", **target)
        return any(isinstance(value, dict) and value.get("state") == "online"
                   for field, value in info.items() if str(field).startswith("slave"))

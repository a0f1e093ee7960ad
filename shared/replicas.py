"""Acknowledge a write only once a replica holds it (Redis WAIT), so a failover cannot lose it.

Redis replicates asynchronously: a master that dies a moment after a write
may take it along, and the replica promoted in its place never had it. For
the writes a player or a result relies on (a table commit, a recorded
result), the service therefore asks, before it answers, for a replica's copy.

WAIT counts the writes of the connection it is sent on, so it follows a
small write of its own (a barrier key in the same slot, hence on the same
master) in one pipeline. A master's replication stream is ordered: once a
replica has the barrier, it has every write the master made before it,
whichever connection made them.

When no replica answers within the wait (a master without a replica in sync,
e.g. right after a failover until the old master is back as a replica), the
write is acknowledged anyway and counted
(``stammtisch_redis_unreplicated_writes_total``), and that master is not
waited for again for :data:`SKIP_SECONDS`: availability over a second copy,
as the README's "What can be lost" table says.
"""

from __future__ import annotations

import time

import redis.asyncio as aioredis
from redis.asyncio.cluster import RedisCluster

from shared.logs import get_logger
from shared.metrics import REDIS_UNREPLICATED

log = get_logger("replicas")

#: A master that kept no replica in sync is written to without waiting for this long.
SKIP_SECONDS = 5.0
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
        self._skip_until: dict[str, float] = {}

    async def after(self, key: str) -> None:
        """Return once a replica has every write made so far to ``key``'s master (or the wait
        gave up, see above). Raises what Redis raises when the master is gone: the caller's
        write may then be lost, so it must not be acknowledged."""
        if self.wait_ms <= 0:
            return
        barrier = f"{self.barrier_prefix}:{{{slot_tag(key)}}}"
        target: dict[str, object] = {}
        name = ""
        if isinstance(self.redis, RedisCluster):
            node = self.redis.get_node_from_key(barrier)
            target, name = {"target_nodes": node}, node.name
        if self._skip_until.get(name, 0.0) > time.monotonic():
            REDIS_UNREPLICATED.inc()
            return
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.set(barrier, b"1", px=BARRIER_TTL_MS)
            pipe.execute_command("WAIT", 1, self.wait_ms, **target)
            _set, acked = await pipe.execute()
        if int(acked) < 1:
            self._skip_until[name] = time.monotonic() + SKIP_SECONDS
            REDIS_UNREPLICATED.inc()
            log.warning("redis_write_unreplicated", master=name or "redis", wait_ms=self.wait_ms,
                        skip_seconds=SKIP_SECONDS)

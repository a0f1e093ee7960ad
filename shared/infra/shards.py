"""Shards: how tables and the indexes over them are spread over Redis Cluster slots.

A Lua script or MULTI in Redis Cluster may only touch keys of one slot, yet a
table commit also updates indexes over many tables (deadlines for the clock,
the results outbox, live tables). So the indexes are cut into ``count``
shards, each with the hash tag ``{s<k>}``; a table belongs to shard
``crc32(table_id) % count`` and its own keys carry that shard's tag, so a
commit writes one slot. Whoever scans an index (clock workers, the results
relay, the live count) scans every shard.

One layout for both modes: a single Redis simply has one shard by default
(``{s0}``), a cluster sixteen (``STAMMTISCH_REDIS_SHARDS``). Changing the
count moves tables to other keys, so a running deployment would no longer
find its live tables: change it only between deployments (README).
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass


@dataclass(frozen=True)
class Shards:
    """The shard count of one deployment."""

    count: int

    def __post_init__(self) -> None:
        if self.count < 1:
            raise ValueError(f"the shard count must be at least 1, got {self.count}")

    def of(self, table_id: str) -> int:
        """The shard of a table: stable across processes and restarts (not Python's hash())."""
        return zlib.crc32(table_id.encode()) % self.count

    def all(self) -> range:
        """Every shard, for whoever scans an index."""
        return range(self.count)

    @staticmethod
    def tag(shard: int) -> str:
        """The hash tag of a shard's keys (a key part)."""
        return "{s" + str(shard) + "}"

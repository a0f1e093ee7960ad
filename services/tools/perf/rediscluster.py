"""What Redis Cluster costs a table commit: the cluster client, and waiting for a replica's copy.

Real ``TableStore`` commits (the commit script with its indexes, an empty
change of a Willi table), one after the other, on a single Redis, on a local
cluster of 3 masters with a replica each without waiting, and with the
replica wait that cluster mode uses by default (shared/infra/replicas.py). Every
node keeps an AOF with fsync every second, as the bench's single Redis does.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from services.tools.perf.stats import Samples
from shared.config import Settings
from shared.games.registry import engine_class
from shared.infra.local_redis_cluster import local_redis_cluster
from shared.infra.runtime import Runtime, connect_redis
from shared.tables.records import CommitRecord, TableMeta
from shared.tables.store import Change, TableStore

#: Tables the commits go round (several shards, hence several masters on the cluster).
TABLES = 8


async def table_commits(settings: Settings, count: int, label: str) -> Samples:
    """``count`` sequential commits through a TableStore on ``settings``' Redis."""
    samples = Samples(f"table commit, {label}")
    redis = connect_redis(settings.redis_url, settings.redis_cluster)
    nothing: Any = None  # commits need no NATS
    store = TableStore(Runtime(settings, redis, nothing, nothing, nothing), lambda _head, _change, _now: {})
    game = engine_class("willi").new(4, {}, 1)
    metas = [TableMeta(f"bench-{index}", "willi", ["a", "b", "c", "d"], seed=1) for index in range(TABLES)]


    def unchanged(meta: TableMeta) -> Callable[[CommitRecord | None], Change]:
        return lambda _head: Change(game, [], meta)

    try:
        for meta in metas:
            await store.commit(meta.table_id, unchanged(meta), allow_new=True)
        for index in range(count):
            meta = metas[index % TABLES]
            started = time.perf_counter()
            await store.commit(meta.table_id, unchanged(meta))
            samples.add(time.perf_counter() - started)
    finally:
        await redis.aclose()
    return samples


async def replica_wait_costs(redis_url: str, data_dir: Path, count: int) -> list[Samples]:
    """Commits on ``redis_url`` (one Redis), then on a local cluster without and with the wait."""
    base = dataclasses.replace(Settings(), key_prefix="bench")
    measured = [await table_commits(dataclasses.replace(base, redis_url=redis_url), count,
                                    "one Redis")]
    with local_redis_cluster(data_dir, masters=3, replicas=1, fsync="everysec") as cluster:
        on_cluster = dataclasses.replace(base, redis_url=cluster.url, redis_cluster=True)
        measured.append(await table_commits(dataclasses.replace(on_cluster, redis_wait_ms=0), count,
                                            "Redis Cluster, no replica wait"))
        measured.append(await table_commits(on_cluster, count,
                                            f"Redis Cluster, WAIT 1 {on_cluster.replica_wait_ms}"))
    return measured

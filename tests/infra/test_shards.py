"""Shards of the indexes over tables: stable, the same layout on one Redis and on a cluster."""

from __future__ import annotations

import zlib
from typing import Any

import pytest

from shared.config import Settings
from shared.infra.replicas import slot_tag
from shared.infra.runtime import Runtime
from shared.infra.shards import Shards


def _runtime(**settings: Any) -> Runtime:
    nothing: Any = None  # the keys need only the settings
    return Runtime(Settings(key_prefix="st", **settings), nothing, nothing, nothing, nothing)


def test_a_table_keeps_its_shard_in_every_process() -> None:
    shards = Shards(16)
    assert shards.of("t1") == zlib.crc32(b"t1") % 16 == shards.of("t1")
    assert {shards.of(f"t{n}") for n in range(200)} == set(shards.all())
    with pytest.raises(ValueError):
        Shards(0)


def test_a_tables_keys_and_its_shards_indexes_share_one_hash_tag() -> None:
    single = _runtime()
    assert single.shards.count == 1 and single.settings.replica_wait_ms == 0
    assert single.table_key("t1", "head") == "st:table:{s0}:t1:head"
    assert single.shard_key("clocks", 0, "engine") == "st:clocks:{s0}:engine"
    cluster = _runtime(redis_cluster=True)
    assert cluster.shards.count == 16 and cluster.settings.replica_wait_ms == 500
    shard = cluster.shards.of("t1")
    keys = [cluster.table_key("t1", "head"), cluster.table_key("t1", "lobby"),
            cluster.shard_key("outbox", shard), cluster.shard_key("live", shard, "willi")]
    assert {slot_tag(key) for key in keys} == {f"s{shard}"}
    assert _runtime(redis_cluster=True, redis_shards=4, redis_wait_ms=0).shards.count == 4


def test_the_slot_tag_is_the_hash_tag_or_the_whole_key() -> None:
    assert slot_tag("st:refresh:{abc}:used") == "abc"
    assert slot_tag("st:player:p1") == "st:player:p1"
    assert slot_tag("st:odd:{}:x") == "st:odd:{}:x"  # an empty tag does not count in Redis either


def test_the_cluster_switch_is_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STAMMTISCH_REDIS_CLUSTER", "1")
    monkeypatch.setenv("STAMMTISCH_REDIS_WAIT_MS", "50")
    settings = Settings.from_env()
    assert settings.redis_cluster and settings.shard_count == 16 and settings.replica_wait_ms == 50
    monkeypatch.setenv("STAMMTISCH_REDIS_CLUSTER", "maybe")
    with pytest.raises(ValueError, match="STAMMTISCH_REDIS_CLUSTER"):
        Settings.from_env()

"""Waiting for a Redis replica's copy of a commit (shared/infra/replicas.py), on a single Redis.

With a replica, a commit is acknowledged once the replica confirmed it; with
none in sync, the first wait gives up after STAMMTISCH_REDIS_WAIT_MS, the
commit is acknowledged anyway and counted, and later commits do not wait
until a replica is online again.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from prometheus_client import REGISTRY

from shared.config import Settings
from shared.games.registry import engine_class
from shared.infra.credentials import Login, login_of, with_login, write_private
from shared.infra.local import LocalServer, binary, free_port, redis_auth_config, start_redis
from shared.infra.runtime import Runtime, open_runtime
from shared.tables.records import TableMeta
from shared.tables.store import Change, TableStore
from tests.support.stack import eventually

pytestmark = pytest.mark.integration


def _unreplicated() -> float:
    return REGISTRY.get_sample_value("stammtisch_redis_unreplicated_writes_total") or 0.0


@pytest.fixture
def primary(tmp_path: Path) -> Iterator[LocalServer]:
    server = start_redis(free_port(), tmp_path / "primary", Login.fresh())
    try:
        yield server
    finally:
        server.stop()


async def _commits(runtime: Runtime, count: int) -> None:
    store = TableStore(runtime, lambda _head, _change, _now: {})
    meta = TableMeta("r1", "willi", ["a", "b", "c", "d"], seed=1)
    game = engine_class("willi").new(4, {}, 1)
    for index in range(count):
        record, _ = await store.commit("r1", lambda _h: Change(game, [], meta), allow_new=index == 0)
        assert record is not None and record.seq == index + 1


@pytest.fixture
async def waiting(settings: Settings, primary: LocalServer) -> AsyncIterator[Runtime]:
    """A runtime on ``primary`` that waits up to 2 s for a replica (a busy machine is slow)."""
    async with open_runtime(dataclasses.replace(settings, redis_url=primary.url, redis_wait_ms=2000)) as rt:
        yield rt


async def test_without_a_replica_commits_are_acknowledged_and_counted(waiting: Runtime) -> None:
    before = _unreplicated()
    await _commits(waiting, 3)
    assert _unreplicated() - before == 3  # acknowledged, each counted as without a copy


async def test_with_a_replica_online_every_commit_has_a_copy(
        waiting: Runtime, primary: LocalServer, tmp_path: Path) -> None:
    port = free_port()
    login = login_of(primary.url)
    assert login is not None
    config = write_private(tmp_path / "replica" / "redis.conf", redis_auth_config(login))
    replica = LocalServer.launch("redis-replica", with_login(f"redis://127.0.0.1:{port}/0", login), [
        binary("redis-server"), str(config), "--port", str(port), "--bind", "127.0.0.1", "--save", "",
        "--appendonly", "no", "--dir", str(tmp_path / "replica"),
        "--replicaof", "127.0.0.1", primary.url.rsplit(":", 1)[1].split("/")[0]], tmp_path / "replica.log")
    try:
        async def online() -> bool:
            info = await waiting.redis.info("replication")
            return any(isinstance(v, dict) and v.get("state") == "online" for v in info.values())

        await eventually(online, what="the replica in sync")
        before = _unreplicated()
        await _commits(waiting, 3)
        assert _unreplicated() == before
    finally:
        replica.stop()

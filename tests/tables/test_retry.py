"""A commit whose reply is lost is re-sent by redis-py's retry and still applies exactly once.

A proxy between the store and the real Redis lets the commit script run and
then cuts the connection before its reply arrives, so redis-py retries it on a
new connection, as it does after a real network fault.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from urllib.parse import urlparse

import pytest

from shared.games.registry import engine_class
from shared.infra.runtime import Runtime, connect_redis
from shared.tables.clocks import deadline_policy
from shared.tables.records import TableMeta
from shared.tables.store import TableStore
from tests.support.proxy import FaultyProxy
from tests.support.stack import first_legal_move

pytestmark = pytest.mark.integration


@pytest.fixture
async def cut(runtime: Runtime) -> AsyncIterator[tuple[FaultyProxy, TableStore]]:
    """A proxy in front of the session's Redis and a store that talks through it."""
    url = urlparse(runtime.settings.redis_url)
    async with FaultyProxy(url.hostname or "127.0.0.1", url.port or 6379).running() as proxy:
        redis = connect_redis(url._replace(netloc=f"{url.netloc.rpartition('@')[0]}@127.0.0.1:{proxy.port}")
                              .geturl())
        try:
            policy = deadline_policy(0.05, runtime.settings.idle_close_seconds)
            yield proxy, TableStore(dataclasses.replace(runtime, redis=redis), policy)
        finally:
            await redis.aclose()


def _meta(table_id: str) -> TableMeta:
    return TableMeta(table_id, "willi", ["a", "b", "c", "d"])


async def test_a_resent_action_commit_answers_with_its_first_seq(
        cut: tuple[FaultyProxy, TableStore]) -> None:
    proxy, store = cut
    await store.create(_meta("lost-act"), engine_class("willi").new(4, {}, 1), [{"type": "game_started"}])

    proxy.cut_reply_to = b"EVALSHA"
    record, answer = await store.commit("lost-act", first_legal_move, act_key="a:1")
    assert proxy.cuts == 1
    assert answer == {"seq": 2} and record is not None and record.seq == 2
    assert [r.seq for r in await store.log_after("lost-act", 0)] == [1, 2]


async def test_a_resent_game_start_starts_the_game_once(cut: tuple[FaultyProxy, TableStore]) -> None:
    proxy, store = cut
    proxy.cut_reply_to = b"EVALSHA"
    record = await store.create(_meta("lost-start"), engine_class("willi").new(4, {}, 1),
                                [{"type": "game_started"}])
    assert proxy.cuts == 1
    assert record.seq == 1
    assert [r.seq for r in await store.log_after("lost-start", 0)] == [1]

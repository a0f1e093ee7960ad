"""A commit's announcement does not depend on its caller staying: a cancelled Act still announces."""

from __future__ import annotations

import asyncio

import pytest
from nats.aio.msg import Msg

from shared.config import Settings
from shared.games.registry import engine_class
from shared.infra.runtime import Runtime
from shared.tables.announce import RELAY_AFTER_SECONDS, live_subject
from shared.tables.clocks import deadline_policy
from shared.tables.records import CommitRecord, TableMeta
from shared.tables.store import Change, TableStore
from shared.tables.writer import TableWriter

pytestmark = pytest.mark.integration


async def test_a_caller_cancelled_right_after_the_commit_does_not_stop_its_announcement(
        runtime: Runtime, settings: Settings) -> None:
    """The client of an Act gives up (deadline, cancel) just as its game-ending commit is made:
    the live news and the result still go out at once, not at the relay's later sweep (no relay
    runs here), and the outbox entry is cleared."""
    store = TableStore(runtime, deadline_policy(0.0, settings.idle_close_seconds))
    writer = TableWriter(runtime, store)
    meta = TableMeta("cancelled-act", "willi", ["a", "b", "c", "d"], seed=1)
    game = engine_class("willi").new(4, {}, 1)
    await store.create(meta, game, [{"type": "game_started"}])
    heard: list[bytes] = []

    async def hear(msg: Msg) -> None:
        heard.append(msg.data)

    news = await runtime.nats.subscribe(live_subject(runtime, meta.table_id), cb=hear)
    results = await runtime.js.pull_subscribe(f"{settings.key_prefix}.results.>", durable="cancel-check")

    def game_over(head: CommitRecord | None) -> Change:
        assert head is not None
        return Change(head.game(), [{"type": "game_over", "winners": [0], "scores": [1, 0, 0, 0]}], head.meta)

    act = asyncio.create_task(writer.commit(meta.table_id, game_over))

    def cancel_the_act(_record: object) -> None:  # the commit is made and being announced
        act.cancel()

    runtime.local_commits.listen(meta.table_id, cancel_the_act)
    try:
        with pytest.raises(asyncio.CancelledError):
            await act
    finally:
        runtime.local_commits.forget(meta.table_id, cancel_the_act)
    published = await results.fetch(1, timeout=RELAY_AFTER_SECONDS - 1)
    assert b"game_over" in published[0].data
    outbox = store.outbox_key(store.shard_of(meta.table_id))
    for _ in range(100):
        if not await runtime.redis.zrange(outbox, 0, -1):
            break
        await asyncio.sleep(0.01)
    assert await runtime.redis.zrange(outbox, 0, -1) == []
    await runtime.live.flush()
    await runtime.nats.flush()
    await asyncio.sleep(0.1)
    await news.unsubscribe()
    assert heard  # the live news went out (perhaps twice: a stream skips a commit it has)

"""The table machinery on real Redis and NATS: commits, idempotency, clocks, fan-out, results."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from typing import Any

import pytest

from services.play.table_play import TablePlay
from shared.api.stammtisch.v1 import common_pb2
from shared.config import Settings
from shared.games.errors import ErrorCode, RuleError
from shared.games.registry import engine_class
from shared.infra.runtime import Runtime, open_runtime
from shared.rpc.actions import action_proto
from shared.rpc.auth import Identity
from shared.tables import feed
from shared.tables.announce import Announcer, live_subject
from shared.tables.clocks import ClockWorker, deadline_policy
from shared.tables.feed import TableFeeds
from shared.tables.records import CommitRecord, TableMeta
from shared.tables.store import Change, TableStore
from shared.tables.writer import TableWriter

pytestmark = pytest.mark.integration


def _store(runtime: Runtime, bot_delay: float = 0.05) -> TableStore:
    return TableStore(runtime, deadline_policy(bot_delay, runtime.settings.idle_close_seconds))


async def _willi_table(store: TableStore, table_id: str = "t1", turn_seconds: float = 0.0,
                       bots: dict[str, str] | None = None) -> CommitRecord:
    meta = TableMeta(table_id, "willi", ["p0", "p1", "p2", "p3"], bots=bots or {},
                     turn_seconds=turn_seconds, seed=3)
    return await store.create(meta, engine_class("willi").new(4, {}, 3), [{"type": "game_started"}])


def _apply(seat: int, action: dict) -> object:  # type: ignore[type-arg]
    def change(head: CommitRecord | None) -> Change:
        assert head is not None
        game = head.game()
        return Change(game, game.apply(seat, action), head.meta, seat, action)
    return change


async def test_concurrent_commits_from_two_replicas_form_one_history(runtime: Runtime) -> None:
    first, second = _store(runtime), _store(runtime)
    head = await _willi_table(first)
    discards = {seat: head.game().view(seat)["hands"][seat][0] for seat in range(4)}
    results = await asyncio.gather(*(
        (first if seat % 2 else second).commit("t1", _apply(seat, {"type": "discard", "card": card}))
        for seat, card in discards.items()))
    seqs = sorted(record.seq for record, _ in results if record)
    assert seqs == [2, 3, 4, 5]
    log = await first.log_after("t1", 0)
    assert [r.seq for r in log] == [1, 2, 3, 4, 5]
    final = log[-1].game().view(None)
    assert final["phase"] == "play" and all(final["discarded"])


async def test_a_refused_change_commits_nothing(runtime: Runtime) -> None:
    store = _store(runtime)
    await _willi_table(store)
    with pytest.raises(RuleError):
        await store.commit("t1", _apply(0, {"type": "play", "card": "R1"}))
    assert (await store.head("t1")).seq == 1


async def test_an_action_id_is_applied_once_even_when_raced(runtime: Runtime) -> None:
    store_a, store_b = _store(runtime), _store(runtime)
    head = await _willi_table(store_a)
    card = head.game().view(0)["hands"][0][0]
    change = _apply(0, {"type": "discard", "card": card})
    outcomes = await asyncio.gather(store_a.commit("t1", change, act_key="p0:a1"),
                                    store_b.commit("t1", change, act_key="p0:a1"),
                                    return_exceptions=True)
    applied = [o for o in outcomes if not isinstance(o, BaseException) and o[1] is None]
    answered = [o for o in outcomes if not isinstance(o, BaseException) and o[1] is not None]
    assert len(applied) == 1 and len(answered) == 1
    assert answered[0][1] == {"seq": 2}
    assert (await store_a.head("t1")).seq == 2


async def test_turn_clock_applies_exactly_one_default_with_two_workers(runtime: Runtime) -> None:
    store = _store(runtime)
    await _willi_table(store, turn_seconds=0.2)
    workers = [ClockWorker(TableWriter(runtime, _store(runtime)), "willi") for _ in range(2)]
    await asyncio.sleep(0.3)
    fired = await asyncio.gather(*(w.run_once() for w in workers))
    fired += await asyncio.gather(*(w.run_once() for w in workers))
    log = await store.log_after("t1", 0)
    timeouts = [e for r in log for e in r.events if e["type"] == "timed_out"]
    # Four seats owed a discard with the same deadline: each got exactly one default.
    assert sorted(e["seat"] for e in timeouts) == [0, 1, 2, 3]
    assert sum(fired) == 4
    # A default is the seat's action (CommitRecord.actor): the seat and the action are recorded.
    defaults = [r for r in log if any(e["type"] == "timed_out" for e in r.events)]
    assert [r.actor for r in defaults] == [r.events[0]["seat"] for r in defaults]
    assert all(r.action is not None and r.action["type"] == "discard" for r in defaults)
    assert log[-1].game().view(None)["phase"] == "play"


async def test_bot_seats_are_played_by_the_clock(runtime: Runtime) -> None:
    store = _store(runtime, bot_delay=0.0)
    await _willi_table(store, bots={str(s): "random" for s in range(4)})
    worker = ClockWorker(TableWriter(runtime, store), "willi")
    for _ in range(2000):
        if not await worker.run_once():
            break
    head = await store.head("t1")
    assert head.game().over, head.game().view(None)["phase"]


async def test_subscribers_resume_without_gap_or_duplicate(runtime: Runtime) -> None:
    store = _store(runtime)
    announcer = Announcer(runtime, store)
    feeds = TableFeeds(runtime, store)
    head = await _willi_table(store)
    seen: list[int] = []

    async def follow(after: int, count: int) -> None:
        async for record in feeds.commits("t1", after):
            seen.append(record.seq)
            if len(seen) == count:
                return

    reader = asyncio.create_task(follow(0, 3))
    await asyncio.sleep(0.1)
    for seat in range(4):
        card = (await store.head("t1")).game().view(seat)["hands"][seat][0]
        record, _ = await store.commit("t1", _apply(seat, {"type": "discard", "card": card}))
        assert record is not None
        await announcer.announce(record)
    await asyncio.wait_for(reader, 5)
    await asyncio.wait_for(follow(seen[-1], 5), 5)  # resume after the last seen
    assert seen == [1, 2, 3, 4, 5]
    assert head.seq == 1


async def test_results_left_in_the_outbox_are_relayed_once(runtime: Runtime, settings: Settings) -> None:
    store = _store(runtime)
    meta = TableMeta("t9", "willi", ["a", "b", "c", "d"], seed=1)
    game = engine_class("willi").new(4, {}, 1)
    record, _ = await store.commit("t9", lambda _h: Change(game, [{"type": "round_over", "round": 1},
                                                                  {"type": "game_over", "winners": [0],
                                                                   "scores": [1, 0, 0, 0]}], meta),
                                   allow_new=True)
    assert record is not None
    # The publisher "died" before JetStream acknowledged: only the outbox knows.
    outbox = await runtime.redis.zrange(store.outbox_key(store.shard_of("t9")), 0, -1)
    assert outbox == [b"t9|1"]
    await runtime.redis.zadd(store.outbox_key(store.shard_of("t9")), {"t9|1": (time.time() - 60) * 1000})
    announcer = Announcer(runtime, store)
    assert await announcer.relay_once() == 1
    assert await announcer.relay_once() == 0
    await announcer.publish_results(record)  # a late duplicate publish is dropped by msg id
    stream = await runtime.js.stream_info(f"{settings.key_prefix.upper()}_RESULTS")
    assert stream.state.messages == 2
    sub = await runtime.js.pull_subscribe(f"{settings.key_prefix}.results.>", durable="check")
    messages = await sub.fetch(2, timeout=2)
    kinds = sorted(json.loads(m.data)["event"]["type"] for m in messages)
    assert kinds == ["game_over", "round_over"]



async def test_live_tables_count_running_games_only(runtime: Runtime) -> None:
    store = _store(runtime, bot_delay=0.0)
    await _willi_table(store, "live1")
    await _willi_table(store, "live2", bots={str(s): "random" for s in range(4)})
    await runtime.redis.zadd(store.live_key("willi", 0), {"abandoned": 1})  # its keys expired long ago
    assert await store.live_tables("willi") == 2
    worker = ClockWorker(TableWriter(runtime, store), "willi")
    while await worker.run_once():
        pass
    assert (await store.head("live2")).game().over
    assert await store.live_tables("willi") == 1


def _no_change(head: CommitRecord | None) -> Change:
    """A commit that changes nothing but the sequence number (cheap filler for a long log)."""
    assert head is not None
    return Change(head.game(), [], head.meta)


async def test_catch_up_reads_every_log_page_without_waiting_for_news(
        runtime: Runtime, monkeypatch: pytest.MonkeyPatch) -> None:
    """A resume from seq 0 over a log longer than one page reads the pages back to back.

    Before, the feed read one page (1,000 commits) and then waited for live
    news or the idle check (2 s, raised here) before it read the next one.
    """
    monkeypatch.setattr(feed, "IDLE_CHECK_SECONDS", 60.0)
    store = _store(runtime)
    await _willi_table(store)
    total = feed.LOG_PAGE + 5
    for _ in range(total - 1):
        await store.commit("t1", _no_change)
    seen: list[int] = []

    async def follow() -> None:
        async for record in TableFeeds(runtime, store).commits("t1", 0):
            seen.append(record.seq)
            if len(seen) == total:
                return

    await asyncio.wait_for(follow(), 20)
    assert seen == list(range(1, total + 1))


async def test_a_stale_head_in_this_process_never_refuses_an_action(runtime: Runtime) -> None:
    """The first attempt runs on the head this process last saw; a replica may have moved on.

    The change below is valid only on the newest head: judged on the stale one it
    would refuse, so the store must read the newest head and apply it there.
    """
    mine, other = _store(runtime), _store(runtime)
    await _willi_table(mine)  # ``mine`` now knows seq 1
    card = (await other.head("t1")).game().view(0)["hands"][0][0]
    await other.commit("t1", _apply(0, {"type": "discard", "card": card}))  # seq 2 elsewhere

    def only_on_the_newest(head: CommitRecord | None) -> Change:
        assert head is not None
        if head.seq != 2:
            raise RuleError(ErrorCode.STALE, f"judged on seq {head.seq}")
        return _no_change(head)

    record, answer = await mine.commit("t1", only_on_the_newest, "p1:a1")
    assert answer is None and record is not None and record.seq == 3
    assert [r.seq for r in await mine.log_after("t1", 0)] == [1, 2, 3]


async def test_a_commit_after_another_process_moved_on_reads_nothing_and_leaves_no_gap(
        runtime: Runtime, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another process committed, and its announcement has not come yet: the lost
    compare-and-set answers with the newest head, the next attempt commits on it without
    reading the head, and this process's streams get that head before the commit that follows
    it. Before, the head was read in a round trip of its own and every stream of the table,
    seeing the next seq first, read the commit it lacked from the log."""
    monkeypatch.setattr(feed, "IDLE_CHECK_SECONDS", 60.0)
    mine, other = _store(runtime), _store(runtime)
    head = await _willi_table(mine)
    head_reads: list[str] = []
    log_reads: list[int] = []
    read_head, read_log = mine._read, mine.log_after

    async def counted_head(table_id: str, act_key: str) -> Any:
        head_reads.append(table_id)
        return await read_head(table_id, act_key)

    async def counted_log(table_id: str, after_seq: int, *args: Any, **kwargs: Any) -> list[CommitRecord]:
        log_reads.append(after_seq)
        return await read_log(table_id, after_seq, *args, **kwargs)

    monkeypatch.setattr(mine, "_read", counted_head)
    monkeypatch.setattr(mine, "log_after", counted_log)
    commits = TableFeeds(runtime, mine).commits("t1", 1)
    pending = asyncio.ensure_future(anext(commits))
    await asyncio.sleep(0.1)  # the stream has read the log and waits for news
    card = head.game().view(0)["hands"][0][0]
    await other.commit("t1", _apply(0, {"type": "discard", "card": card}))  # seq 2, not announced
    record, _ = await mine.commit("t1", _no_change)
    assert record is not None and record.seq == 3
    await Announcer(runtime, mine).announce(record)
    assert (await asyncio.wait_for(pending, 5)).seq == 2
    assert (await asyncio.wait_for(anext(commits), 5)).seq == 3
    await commits.aclose()
    assert head_reads == [], "the head was read again after the compare-and-set had returned it"
    assert log_reads == [1], "a stream read a commit from the log that this process had read already"


async def test_a_refusal_on_the_head_a_lost_commit_returned_stands(runtime: Runtime) -> None:
    """The head a lost compare-and-set returns is the newest: a change it refuses is refused."""
    mine, other = _store(runtime), _store(runtime)
    head = await _willi_table(mine)
    card = head.game().view(0)["hands"][0][0]
    await other.commit("t1", _apply(0, {"type": "discard", "card": card}))
    with pytest.raises(RuleError):  # seat 0 has discarded already
        await mine.commit("t1", _apply(0, {"type": "discard", "card": card}))
    assert (await mine.head("t1")).seq == 2


async def test_act_answers_with_the_update_the_actors_stream_carries(
        runtime: Runtime, settings: Settings) -> None:
    """Act does not build the caller's update a second time: it is the one the stream sends."""
    play = TablePlay(runtime, frozenset({"willi"}), "engine", settings)
    await _willi_table(play.store)
    card = (await play.store.head("t1")).game().view(1)["hands"][1][0]
    who = Identity("p1", "p1", time.time() + 60)
    reply = await play.act(who, "t1", "a1", action_proto({"type": "discard", "card": card}))
    stream = aiter(play.subscribe(who, "t1", 1))
    [carried] = (await asyncio.wait_for(anext(stream), 5)).updates
    await stream.aclose()  # type: ignore[attr-defined]
    update = common_pb2.TableUpdate.FromString(carried)
    assert update.seq == 2 and update.seat == 1
    assert carried is reply  # the same serialised bytes, made once


async def test_a_stream_that_missed_the_last_message_finds_it_in_the_log(
        runtime: Runtime, monkeypatch: pytest.MonkeyPatch) -> None:
    """A commit never announced on NATS (its message lost) reaches a quiet stream by the idle
    check, and the check's timer ends with the last stream."""
    monkeypatch.setattr(feed, "IDLE_CHECK_SECONDS", 0.1)
    store = _store(runtime)
    await _willi_table(store)
    feeds = TableFeeds(runtime, store)
    commits = feeds.commits("t1", 1)
    pending = asyncio.ensure_future(anext(commits))
    await asyncio.sleep(0.05)  # the stream has read the log and waits for news
    await store.commit("t1", _no_change)  # seq 2, and no message about it
    assert (await asyncio.wait_for(pending, 5)).seq == 2
    await commits.aclose()
    for _ in range(50):
        if feeds._timer is None:
            break
        await asyncio.sleep(0.05)
    assert feeds._timer is None


async def test_a_quiet_stream_that_has_everything_does_not_read_the_log(
        runtime: Runtime, monkeypatch: pytest.MonkeyPatch) -> None:
    """The idle check reads one head seq per quiet table; only a stream behind it reads the log.

    Before, every quiet stream read the log at every check: a Redis call per stream every few
    seconds for streams that had every commit.
    """
    monkeypatch.setattr(feed, "IDLE_CHECK_SECONDS", 0.05)
    store = _store(runtime)
    await _willi_table(store)
    reads: list[int] = []
    read_log = store.log_after

    async def counted(table_id: str, after_seq: int, *args: Any, **kwargs: Any) -> list[CommitRecord]:
        reads.append(after_seq)
        return await read_log(table_id, after_seq, *args, **kwargs)

    monkeypatch.setattr(store, "log_after", counted)
    feeds = TableFeeds(runtime, store)
    commits = feeds.commits("t1", 0)
    assert (await asyncio.wait_for(anext(commits), 5)).seq == 1
    pending = asyncio.ensure_future(anext(commits))
    await asyncio.sleep(0.5)  # about ten idle checks
    assert reads == [0], "a stream with every commit read the log while it was quiet"
    await store.commit("t1", _no_change)  # seq 2, never announced: the next check finds it
    assert (await asyncio.wait_for(pending, 5)).seq == 2
    assert reads == [0, 1]
    await commits.aclose()


async def test_the_idle_check_outlives_an_unreachable_redis(
        runtime: Runtime, monkeypatch: pytest.MonkeyPatch) -> None:
    """A failed head read skips one check; the next one still finds a missed commit."""
    monkeypatch.setattr(feed, "IDLE_CHECK_SECONDS", 0.05)
    store = _store(runtime)
    await _willi_table(store)
    failures = [ConnectionError("redis is down")] * 3
    head_seqs = store.head_seqs

    async def flaky(table_ids: list[str]) -> list[int]:
        if failures:
            raise failures.pop()
        return await head_seqs(table_ids)

    monkeypatch.setattr(store, "head_seqs", flaky)
    commits = TableFeeds(runtime, store).commits("t1", 1)
    pending = asyncio.ensure_future(anext(commits))
    await asyncio.sleep(0.05)
    await store.commit("t1", _no_change)  # seq 2, never announced
    assert (await asyncio.wait_for(pending, 5)).seq == 2
    assert not failures
    await commits.aclose()


async def test_own_commits_reach_local_streams_directly_and_others_through_nats(
        runtime: Runtime, settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    """A commit reaches this process's streams without the NATS echo, and another process's
    streams through NATS. The idle check is pushed out of reach: only news can deliver."""
    monkeypatch.setattr(feed, "IDLE_CHECK_SECONDS", 60.0)
    store = _store(runtime)
    await _willi_table(store)
    echoes: list[bytes] = []

    async def count(msg: object) -> None:
        echoes.append(getattr(msg, "data", b""))

    echo_probe = await runtime.live.subscribe(live_subject(runtime, "t1"), cb=count)
    async with open_runtime(settings, "stammtisch-other") as other:
        here = TableFeeds(runtime, store).commits("t1", 1)
        there = TableFeeds(other, _store(other)).commits("t1", 1)
        got_here, got_there = asyncio.ensure_future(anext(here)), asyncio.ensure_future(anext(there))
        await asyncio.sleep(0.2)  # both streams have read the log and wait for news
        record, _ = await store.commit("t1", _no_change)
        assert record is not None
        await Announcer(runtime, store).announce(record)
        assert (await asyncio.wait_for(got_here, 5)).seq == 2
        assert (await asyncio.wait_for(got_there, 5)).seq == 2
        await here.aclose()
        await there.aclose()
    await runtime.live.flush()
    await echo_probe.unsubscribe()
    assert echoes == [], "the live connection echoed this process's own commit"


async def test_a_commit_reaches_the_stream_of_the_seat_that_made_it_first(runtime: Runtime) -> None:
    """The actor's stream, whose answer rides on the commit's update, is woken before the
    streams of the other seats, however late it opened."""
    store = _store(runtime)
    head = await _willi_table(store)
    feeds = TableFeeds(runtime, store)
    woken: list[int] = []

    async def follow(seat: int) -> None:
        async with contextlib.aclosing(feeds.commits("t1", 1, seat=seat)) as commits:
            await anext(commits)
            woken.append(seat)

    followers = []
    for seat in (3, 2, 1, 0):  # the actor's stream opens last
        followers.append(asyncio.create_task(follow(seat)))
        await asyncio.sleep(0.05)  # read the log, then wait for news
    card = head.game().view(0)["hands"][0][0]
    record, _ = await store.commit("t1", _apply(0, {"type": "discard", "card": card}))
    assert record is not None and record.actor == 0
    await Announcer(runtime, store).announce(record)
    await asyncio.wait_for(asyncio.gather(*followers), 5)
    assert woken == [0, 3, 2, 1]


async def test_the_writer_announces_each_commit_it_makes_and_never_a_stored_answer(runtime: Runtime) -> None:
    store = _store(runtime)
    await _willi_table(store, "w1")
    writer, heard = TableWriter(runtime, store), []
    head = await store.head("w1")
    seat = head.game().to_act()[0]
    action = head.game().legal_actions(seat)[0]

    def act(head: CommitRecord | None) -> Change:
        assert head is not None
        game = head.game()
        return Change(game, game.apply(seat, action), head.meta, seat, action)

    runtime.local_commits.listen("w1", heard.append)
    try:
        record, answer = await writer.commit("w1", act, "p:a1")
        _, stored = await writer.commit("w1", act, "p:a1")  # a retried action id
    finally:
        runtime.local_commits.forget("w1", heard.append)
    assert record is not None and answer is None and stored == {"seq": record.seq}
    assert [commit.seq for commit in heard] == [record.seq]

"""The log keeps actions between snapshots: every seq read back from it is the commit as made.

Tables of every game get every kind of commit the services make (players'
actions, a turn clock's default, a server bot's move, a round's time limit,
seats handed to a bot and back, a stand-in bot taking over with a meta change,
chat, the next game of the series, the close); then the log, read whole, page
by page, from any seq and one seq at a time, must give back each commit as
its head was: state, events, meta, deadlines, actor and action.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import random
import time
import zlib
from collections.abc import Callable
from typing import Any

import orjson
import pytest

from shared.games.catalog import CATALOGUE, entry
from shared.games.record import dumps
from shared.games.registry import bot_levels, engine_class
from shared.infra.runtime import Runtime
from shared.tables import feed
from shared.tables import store as store_module
from shared.tables.clocks import deadline_policy, expire
from shared.tables.feed import TableFeeds
from shared.tables.records import CommitRecord, TableMeta
from shared.tables.store import Change, NothingToDo, TableStore
from tests.support.stack import first_legal_move

pytestmark = pytest.mark.integration

#: Small, so that a few hundred commits cross many snapshots.
EVERY = 7
COMMITS = 260


def _store(runtime: Runtime) -> TableStore:
    return TableStore(runtime, deadline_policy(0.0, 3600.0))


def _same(a: CommitRecord, b: CommitRecord) -> bool:
    def whole(r: CommitRecord) -> str:
        return json.dumps([r.seq, r.at, dataclasses.asdict(r.meta), r.state, r.events, r.deadlines,
                           r.actor, r.action], sort_keys=True)
    return whole(a) == whole(b)


def _viewer(views: dict[int, Any]) -> Callable[[CommitRecord], None]:
    """A log reader's visit that keeps seat 1's view of each commit, made as the walk is at it."""
    def visit(record: CommitRecord) -> None:
        views[record.seq] = record.engine().view(1)
    return visit


def _meta(table_id: str, game: str, seats: int) -> TableMeta:
    options = {"round_seconds": 30} if game == "wie-waldi" else {}
    return TableMeta(table_id, game, [f"p{seat}" for seat in range(seats)], turn_seconds=20.0,
                     options=options, seed=5)


def _start(meta: TableMeta) -> Change:
    game = engine_class(meta.game).new(len(meta.players), meta.options, meta.seed)
    return Change(game, [{"type": "game_started", "game_no": meta.game_no}], meta)


def _one_change(head: CommitRecord | None, rng: random.Random) -> Change:
    """A change of a random kind on the head, as some service would make it."""
    assert head is not None
    meta, game = head.meta, head.game()
    if game.over:
        return _start(dataclasses.replace(meta, game_no=meta.game_no + 1, seed=meta.seed + 1,
                                                bots={}))
    kind = rng.random()
    if kind < 0.12:
        return expire(head, time.time() + 10_000)  # a default, a bot's move or a time limit
    seat = rng.randrange(len(meta.players))
    if kind < 0.17:  # a seat handed to a bot, or back (the lobby)
        bots = dict(meta.bots)
        event = "seat_reclaimed" if bots.pop(str(seat), None) else "seat_bot"
        if event == "seat_bot":
            bots[str(seat)] = "heuristic"
        return Change(game, [{"type": event, "seat": seat}], dataclasses.replace(meta, bots=bots))
    waiting = game.to_act()
    if not waiting:
        raise NothingToDo
    seat = rng.choice(waiting)
    if kind < 0.20 and entry(meta.game).leave_and_chat:
        action: dict[str, Any] = {"type": "chat", "text": "servus"}
        return Change(game, game.apply(seat, action), meta, seat, action)
    action = bot_levels(meta.game)["heuristic"]().choose(game.view(seat), rng)
    if kind < 0.22:  # a stand-in takes over and moves in the same commit (tournament play-out)
        meta = dataclasses.replace(meta, bots={str(s): "heuristic" for s in range(len(meta.players))})
    return Change(game, game.apply(seat, action), meta, seat, action)


async def _played(store: TableStore, table_id: str, game: str, commits: int) -> dict[int, CommitRecord]:
    """Heads as committed, by seq; the table ends closed."""
    rng = random.Random(table_id)
    seats = min(4, CATALOGUE[game].max_seats)
    first = _start(_meta(table_id, game, seats))
    made = {1: await store.create(first.meta, first.game, first.events)}
    while len(made) < commits:
        try:
            record, _ = await store.commit(table_id, lambda head: _one_change(head, rng))
        except NothingToDo:
            continue
        assert record is not None
        made[record.seq] = record

    def close(head: CommitRecord | None) -> Change:
        assert head is not None
        return Change(head.game(), [{"type": "table_closed", "reason": "idle"}],
                      dataclasses.replace(head.meta, closed="idle"))

    record, _ = await store.commit(table_id, close)
    assert record is not None
    made[record.seq] = record
    return made


@pytest.mark.parametrize("game", list(CATALOGUE))
async def test_every_seq_read_back_from_the_log_is_the_commit_as_made(
        runtime: Runtime, game: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store_module, "SNAPSHOT_EVERY", EVERY)
    monkeypatch.setattr(feed, "LOG_PAGE", 10)
    table_id = f"snap-{game}"
    made = await _played(_store(runtime), table_id, game, COMMITS)
    reader = _store(runtime)  # another replica: it never saw these heads

    # What each commit stored (its engine's state written straight to JSON) reads back as made.
    assert all(_same(CommitRecord.decode(r.encode()), r) for r in made.values())
    whole = await reader.log_after(table_id, 0, limit=100_000)
    assert [r.seq for r in whole] == sorted(made)
    assert all(_same(r, made[r.seq]) for r in whole)
    # Read for the states only (the archive): one engine goes through, each keeps its JSON.
    for after in (0, 3, 40):
        states = await _store(runtime).log_after(table_id, after, limit=100_000, states_only=True)
        assert [r.seq for r in states] == sorted(made)[after:]
        assert all(_same(r, made[r.seq]) and _same(CommitRecord.decode(r.encode()), r) for r in states)
        assert all(r.engine().view(0) == made[r.seq].engine().view(0) for r in states[::37])
        # A stream catching up makes each commit's view while the walk is at it.
        views: dict[int, Any] = {}
        await _store(runtime).log_after(table_id, after, limit=100_000, visit=_viewer(views))
        assert views == {seq: made[seq].engine().view(1) for seq in sorted(made)[after:]}

    rng = random.Random(1)
    for after in rng.sample(sorted(made)[:-1], 25):
        page = await reader.log_after(table_id, after, limit=rng.randint(1, 30))
        assert page and all(_same(r, made[r.seq]) for r in page)
        assert page[0].seq == after + 1
        one = await _store(runtime).record(table_id, after)
        assert _same(one, made[after])

    for other in (2, 100):  # a reader whose snapshot interval is not the writer's walks back as far
        monkeypatch.setattr(store_module, "SNAPSHOT_EVERY", other)
        for seq in rng.sample(sorted(made), 10):
            assert _same(await _store(runtime).record(table_id, seq), made[seq])
    monkeypatch.setattr(store_module, "SNAPSHOT_EVERY", EVERY)

    fed = []
    async for record in TableFeeds(runtime, reader).commits(table_id, 0):
        fed.append(record)
        if record.seq == max(made):
            break
    assert all(_same(r, made[r.seq]) for r in fed) and len(fed) == len(made)

    # A stream's own views, made page after page (10 commits each) as one engine walks the log.
    paged: dict[int, Any] = {}
    async for run in TableFeeds(runtime, _store(runtime)).runs(table_id, 0, visit=_viewer(paged)):
        if run[-1].seq == max(made):
            break
    assert paged == {seq: made[seq].engine().view(1) for seq in made}


async def test_the_log_keeps_the_whole_record_only_where_no_action_explains_it(
        runtime: Runtime, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store_module, "SNAPSHOT_EVERY", EVERY)
    store = _store(runtime)
    made = await _played(store, "kinds", "wie-waldi", 120)
    entries = await runtime.redis.xrange(store.key("kinds", "log"))
    snapshots = [int(entry_id.split(b"-")[0]) for entry_id, fields in entries if b"rec" in fields]
    assert all(b"rec" in fields or b"act" in fields for _id, fields in entries)
    assert all(later - earlier <= EVERY for earlier, later in itertools.pairwise(snapshots))
    for seq, record in made.items():
        if record.actor is None or record.action is None or seq == 1 or seq % EVERY == 0 or \
                dataclasses.asdict(record.meta) != dataclasses.asdict(made[seq - 1].meta):
            assert seq in snapshots, seq
        else:
            assert seq not in snapshots, seq
    for _id, fields in entries:
        if b"act" in fields:
            assert set(orjson.loads(fields[b"act"])) == {"seq", "at", "events", "deadlines", "actor",
                                                        "action"}


async def test_a_table_committed_before_snapshots_reads_and_goes_on(runtime: Runtime) -> None:
    """A head and log written whole per commit (before snapshots): read as snapshots."""
    store = _store(runtime)
    game = engine_class("willi").new(4, {}, 3)
    meta = TableMeta("old", "willi", ["p0", "p1", "p2", "p3"], seed=3)
    old = zlib.compress(dumps({"seq": 1, "at": 1.0, "meta": dataclasses.asdict(meta),
                               "state": game.to_dict(), "events": [{"type": "game_started"}],
                               "deadlines": {}, "actor": None, "action": None}), 1)
    await runtime.redis.hset(store.key("old", "head"), mapping={"seq": 1, "rec": old})
    await runtime.redis.xadd(store.key("old", "log"), {"rec": old}, id="1-0")
    made = [(await store.commit("old", first_legal_move))[0] for _ in range(2)]
    entries = await runtime.redis.xrange(store.key("old", "log"))
    assert [sorted(fields) for _id, fields in entries] == [[b"rec"], [b"act"], [b"act"]]
    log = await _store(runtime).log_after("old", 0)
    assert [r.seq for r in log] == [1, 2, 3]
    assert all(record is not None and _same(one, record) for one, record in zip(log[1:], made, strict=True))
    one = await _store(runtime).record("old", 3)
    assert made[-1] is not None and _same(one, made[-1])

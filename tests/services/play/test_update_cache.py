"""The updates cache is small: a commit it let go of still gives every seat the same bytes,
made from the record's own engine (never restored again from the stored state)."""

from __future__ import annotations

from services.play.updates import UpdateCache
from shared.games.registry import engine_class
from shared.tables.records import CommitRecord, TableMeta


def _record(seq: int) -> CommitRecord:
    game = engine_class("wie-waldi").new(4, {}, seq)
    meta = TableMeta("t1", "wie-waldi", ["a", "b", "c", "d"], seed=seq)
    return CommitRecord(seq, 1000.0 + seq, meta, None, [{"type": "game_started"}], {"0": 1020.0},
                        engine=game)


def test_an_evicted_commit_is_built_again_from_its_records_engine() -> None:
    cache = UpdateCache(size=2)
    record = _record(1)
    engine = record.engine()
    cached = cache.of(record)
    first = {seat: cached.wire(seat) for seat in (None, 0, 1, 2, 3)}
    assert cache.of(record) is cached
    for seq in (2, 3):
        cache.of(_record(seq))
    again = cache.of(record)
    assert again is not cached
    assert {seat: again.wire(seat) for seat in first} == first
    assert record.engine() is engine and record._state is None
    assert len({first[seat] for seat in first}) == len(first)  # each seat its own view

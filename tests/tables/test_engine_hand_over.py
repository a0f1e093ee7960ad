"""A commit's engine goes on to the next commit instead of being copied: the record it leaves
still shows, stores and restores exactly the state it committed."""

from __future__ import annotations

import pytest

from shared.games.catalog import CATALOGUE
from shared.games.errors import RuleError
from shared.games.registry import engine_class
from shared.tables.records import CommitRecord, TableMeta


def _committed(game_name: str) -> CommitRecord:
    game = engine_class(game_name).new(4, {}, 7)
    record = CommitRecord(5, 1.0, TableMeta("t1", game_name, ["a", "b", "c", "d"], seed=7), None,
                          [], {}, engine=game)
    record.encode()  # as every commit is, before the next one can take its engine
    return record


def _views(record: CommitRecord) -> list[dict[str, object]]:
    engine = record.engine()
    return [engine.view(seat) for seat in (*range(engine.seat_count), None)]


@pytest.mark.parametrize("game_name", sorted(CATALOGUE))
def test_a_record_whose_engine_went_on_keeps_its_views_and_state(game_name: str) -> None:
    record = _committed(game_name)
    views, blob, state = _views(record), record.encode(), record.engine().to_dict()
    engine = record.hand_over_engine()
    seat = engine.to_act()[0]
    engine.apply(seat, engine.legal_actions(seat)[0])
    assert engine.to_dict() != state
    assert _views(record) == views
    assert record.engine().to_dict() == state
    assert record.encode() == blob
    assert CommitRecord.decode(blob).engine().to_dict() == state


@pytest.mark.parametrize("game_name", sorted(CATALOGUE))
def test_a_refused_action_on_a_handed_over_engine_leaves_the_head_as_committed(game_name: str) -> None:
    record = _committed(game_name)
    state = record.engine().to_dict()
    engine = record.hand_over_engine()
    with pytest.raises(RuleError):
        engine.apply(0, {"type": "no-such-action"})
    again = record.hand_over_engine()
    assert again is not engine
    assert again.to_dict() == state

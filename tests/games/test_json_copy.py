"""json_copy: the engines' deep copy shares nothing with what it copies, nested lists included."""

from __future__ import annotations

from typing import Any

from shared.games.record import json_copy


def _lists(value: Any) -> list[Any]:
    """Every list and dict inside ``value``, ``value`` included."""
    found = [value] if isinstance(value, list | dict) else []
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
    for item in items:
        found += _lists(item)
    return found


def test_nested_lists_and_dicts_are_equal_and_share_nothing() -> None:
    state = {"piles": [[["Ra1", "Gb2"], [], ["Hz"]], [[], []]], "seats": [[0, 1], [2]],
             "dogs": [{"cards": ["x"], "by": [0], "owner": None}], "empty": [], "n": 3,
             "rows": [[[1, 2]], [[]]], "mixed": [None, [1], {"a": []}, "s"]}
    copied = json_copy(state)
    assert copied == state
    originals = {id(item) for item in _lists(state)}
    assert not originals & {id(item) for item in _lists(copied)}


def test_tuples_become_lists() -> None:
    assert json_copy({"pair": (1, 2), "deep": [(["a"], "b")]}) == {"pair": [1, 2], "deep": [[["a"], "b"]]}

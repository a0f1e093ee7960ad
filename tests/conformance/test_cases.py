"""Every game's scenarios (the ``cases/`` of its package) replayed through the pure engines and
checked against their `expect`.

The games come from the catalogue, so an installed game's cases run with no edit here. The
comparison is the conformance checker's: results as "ok" or the error code, and each expected
state field by deep equality, where card lists under `hands` and `visible` compare as
multisets (unless the game's entry says its `hands` keep an order the rules fix).
"""

from __future__ import annotations

import json
from importlib.resources.abc import Traversable
from typing import Any

import pytest

from shared.games.catalog import CATALOGUE, GameEntry, entry
from shared.games.replay import run_scenario

UNORDERED = {"hands", "visible"}


def cases(game: GameEntry) -> list[Traversable]:
    """The scenario files of a game's package, by name (none when it has no ``cases/``)."""
    folder = game.resource("cases")
    return sorted((path for path in folder.iterdir() if path.name.endswith(".json")),
                  key=lambda path: path.name) if folder.is_dir() else []


CASES = [(name, path) for name, game in CATALOGUE.items() for path in cases(game)]


def normalise(key: str, value: Any, game: GameEntry) -> Any:
    """Sort card lists of the fields whose order does not matter."""
    if key not in UNORDERED or (key == "hands" and game.ordered_hands):
        return value
    return _sort_card_lists(value)


def _sort_card_lists(value: Any) -> Any:
    if isinstance(value, list) and all(isinstance(x, str) for x in value):
        return sorted(value)
    if isinstance(value, list):
        return [_sort_card_lists(x) for x in value]
    return value


def test_every_game_has_cases() -> None:
    assert {name for name, _ in CASES} == set(CATALOGUE)


@pytest.mark.parametrize(("name", "path"), CASES,
                         ids=[f"{name}/{path.name.removesuffix('.json')}" for name, path in CASES])
def test_case(name: str, path: Traversable) -> None:
    case = json.loads(path.read_text(encoding="utf-8"))
    assert case["game"] == name, f"a case of {name} plays {case['game']}"
    expect = case.get("expect", {})
    outcome = run_scenario(case)
    got = ["ok" if r["ok"] else r["error"] for r in outcome["results"]]
    if "results" in expect:
        assert got == expect["results"]
    game = entry(name)
    for key, want in expect.get("state", {}).items():
        assert key in outcome["state"], f"state has no field {key!r}"
        assert normalise(key, outcome["state"][key], game) == normalise(key, want, game), key

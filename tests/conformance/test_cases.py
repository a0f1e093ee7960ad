"""Every scenario in cases/ replayed through the pure engines and checked against its `expect`.

The comparison is the conformance checker's: results as "ok" or the error
code, and each expected state field by deep equality, where card lists under
`hands` and `visible` compare as multisets (Willi Wacker hands keep their order).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from shared.games.replay import run_scenario

CASES = sorted((Path(__file__).parent / "cases").glob("*.json"))
UNORDERED = {"hands", "visible"}


def normalise(key: str, value: Any, game: str) -> Any:
    """Sort card lists of the fields whose order does not matter."""
    if key not in UNORDERED or (key == "hands" and game == "willi-wacker"):
        return value
    return _sort_card_lists(value)


def _sort_card_lists(value: Any) -> Any:
    if isinstance(value, list) and all(isinstance(x, str) for x in value):
        return sorted(value)
    if isinstance(value, list):
        return [_sort_card_lists(x) for x in value]
    return value


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_case(path: Path) -> None:
    case = json.loads(path.read_text(encoding="utf-8"))
    expect = case.get("expect", {})
    outcome = run_scenario(case)
    got = ["ok" if r["ok"] else r["error"] for r in outcome["results"]]
    if "results" in expect:
        assert got == expect["results"]
    game = case["game"]
    for key, want in expect.get("state", {}).items():
        assert key in outcome["state"], f"state has no field {key!r}"
        assert normalise(key, outcome["state"][key], game) == normalise(key, want, game), key

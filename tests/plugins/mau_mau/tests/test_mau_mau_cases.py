"""The package's own conformance scenarios (``mau_mau/cases``), checked as the repository's are.

The repository's ``tests/conformance/test_cases.py`` reads only its own ``cases/`` folder, so
this replays the game's folder through the same ``run_scenario`` and the same comparison.
"""

from __future__ import annotations

import json
from importlib.resources.abc import Traversable

import pytest

from shared.games.catalog import entry
from shared.games.replay import run_scenario
from tests.conformance.test_cases import normalise

CASES = sorted((case for case in entry("mau-mau").resource("cases").iterdir()
                if case.name.endswith(".json")), key=lambda case: case.name)


def test_the_package_ships_its_scenarios() -> None:
    assert len(CASES) >= 8


@pytest.mark.parametrize("path", CASES, ids=[case.name.removesuffix(".json") for case in CASES])
def test_case(path: Traversable) -> None:
    case = json.loads(path.read_text(encoding="utf-8"))
    assert case["game"] == "mau-mau"
    expect = case["expect"]
    outcome = run_scenario(case)
    assert ["ok" if r["ok"] else r["error"] for r in outcome["results"]] == expect["results"]
    for key, want in expect["state"].items():
        assert key in outcome["state"], f"state has no field {key!r}"
        assert normalise(key, outcome["state"][key], "mau-mau") == normalise(key, want, "mau-mau"), key

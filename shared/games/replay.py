"""`stammtisch replay`: run a conformance scenario against a pure engine.

The scenario format is documented in tests/conformance/README.md; each game keeps its
scenarios in the ``cases/`` folder of its package. Exit 0 for a well-formed scenario
whatever its actions did; exit 2 for one that is not.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from shared.games.catalog import CATALOGUE
from shared.games.errors import RuleError, SetupError
from shared.games.registry import engine_class


class ScenarioError(ValueError):
    """The scenario itself is malformed (unknown game, bad setup or options)."""


def run_scenario(scenario: Mapping[str, Any]) -> dict[str, Any]:
    """Apply every action of the scenario; return results and the state summary."""
    game_name = scenario.get("game")
    if game_name not in CATALOGUE:
        raise ScenarioError(f"unknown game {game_name!r}")
    actions = scenario.get("actions", [])
    if not isinstance(actions, list):
        raise ScenarioError("'actions' must be a list")
    seats, options = scenario.get("seats"), scenario.get("options") or {}
    if not isinstance(seats, int) or not isinstance(options, dict):
        raise ScenarioError("'seats' must be a number and 'options' an object")
    try:
        game = engine_class(str(game_name)).new(seats, options, scenario.get("seed", 0),
                                                scenario.get("setup") or None)
    except SetupError as exc:
        raise ScenarioError(str(exc)) from exc
    results: list[dict[str, Any]] = []
    for entry in actions:
        if not isinstance(entry, dict):
            raise ScenarioError("every action must be an object")
        action = {k: v for k, v in entry.items() if k != "seat"}
        try:
            game.apply(game.check_seat(entry.get("seat")), action)
        except RuleError as err:
            results.append({"ok": False, "error": err.code.value, "message": err.message})
        else:
            results.append({"ok": True})
    return {"results": results, "state": game.summary()}


def main(path: str) -> int:
    """CLI entry: read FILE (or - for stdin), print the outcome as one JSON object."""
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
        scenario = json.loads(text)
        if not isinstance(scenario, dict):
            raise ScenarioError("a scenario is a JSON object")
        outcome = run_scenario(scenario)
    except (OSError, ValueError) as exc:
        print(f"replay: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(outcome))
    return 0

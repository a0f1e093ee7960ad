"""The JSON Schemas of each game's package (``schemas/``) describe every view and event it makes
and every action it takes.

Client developers generate Swift and Kotlin types from these files, so a view
key or an event the schema does not describe would break their apps silently.
Seeded random playouts of every game in the catalogue check every view (every
seat and the spectator, every step), every legal action and every event against
them; the source scan makes a new event type without a schema fail even before a
playout meets it, and the actions schema is held to the engine's table of moves.
"""

from __future__ import annotations

import ast
import json
import random
import re
from collections.abc import Iterator
from functools import cache
from importlib import import_module
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from shared.games.base import Event, Game
from shared.games.catalog import CATALOGUE, entry
from shared.games.engine import Engine
from shared.games.errors import RuleError
from shared.games.registry import engine_class
from tests.support.schemas import load_schema as schema

GAMES = sorted(CATALOGUE)
KINDS = ("view", "events", "actions")
#: Seeds per seat count: every seat count of every game is played this many times (each
#: playout checks some thousand views; more seeds find nothing new but cost minutes).
SEEDS = 1


@cache
def validator(name: str) -> Draft202012Validator:
    """A validator that also checks ``format``-free draft 2020-12 rules strictly."""
    return Draft202012Validator(schema(name))


def variants(name: str) -> dict[str, str]:
    """The ``type`` constants of a schema's variants (events or actions) -> their $defs name."""
    root = schema(name)
    refs = root["oneOf"] if "oneOf" in root else root["$defs"]["Action"]["oneOf"]
    found = {}
    for ref in refs:
        definition = ref["$ref"].rsplit("/", 1)[1]
        found[root["$defs"][definition]["properties"]["type"]["const"]] = definition
    return found


def check(name: str, instance: Any, where: str) -> None:
    """Fail with every schema error of the instance, and where it came from."""
    errors = sorted(validator(name).iter_errors(instance), key=lambda e: list(e.absolute_path))
    assert not errors, f"{where}: {name} rejects it:\n" + "\n".join(
        f"  at /{'/'.join(map(str, e.absolute_path))}: {e.message[:300]}" for e in errors[:5])


def extra_move(game: Game, rng: random.Random, left: set[int]) -> tuple[str, list[Event]] | None:
    """A move bots never choose but people make, in games whose rules have them: table talk now
    and then, rarely a leave while more than the fewest seats stay (``left``: the seats that
    left). Returns the action type and its events; None when none came or the rules refused it."""
    if not entry(game.name).leave_and_chat:
        return None
    seat = rng.randrange(game.seat_count)
    if rng.random() < 0.05:
        action: dict[str, Any] = {"type": "chat", "text": "gut gespielt"}
    elif rng.random() < 0.01 and seat not in left and game.seat_count - len(left) > game.min_seats:
        action = {"type": "leave"}
    else:
        return None
    try:
        events = game.apply(seat, action)
    except RuleError:
        return None
    if action["type"] == "leave":
        left.add(seat)
    return action["type"], events


def playout(name: str, seats: int, seed: int) -> Iterator[tuple[Game, list[Event], str]]:
    """A random playout to the end; yields the game after each commit, its events and a label.

    The smallest table plays a whole game with the defaults, larger ones the game's short
    options; a game with a round time limit has it run out now and then."""
    game_entry = entry(name)
    rng = random.Random(f"{name}:{seats}:{seed}")
    options = {} if seats == game_entry.min_seats else dict(game_entry.short_options)
    game = engine_class(name).new(seats, options, seed)
    left: set[int] = set()
    yield game, [], f"{name} {seats} seats seed {seed} at the start"
    for step in range(100_000):
        if game.over:
            return
        extra = extra_move(game, rng, left)
        if extra is not None:
            yield game, extra[1], f"{name} seed {seed} step {step} ({extra[0]})"
        if game.round_limit() is not None and rng.random() < 0.002:
            events = game.time_up(game.current_round)
        else:
            seat = rng.choice(game.to_act())
            events = game.apply(seat, rng.choice(game.view(seat)["legal"]))
        yield game, events, f"{name} {seats} seats seed {seed} step {step}"
    raise AssertionError(f"{name} seed {seed} did not end")


@pytest.mark.parametrize("name", GAMES)
def test_the_schemas_are_valid_draft_2020_12(name: str) -> None:
    for kind in KINDS:
        Draft202012Validator.check_schema(schema(f"{name}.{kind}"))
    Draft202012Validator.check_schema(schema("table.events"))


@pytest.mark.slow
@pytest.mark.parametrize("name", GAMES)
def test_every_view_event_and_legal_action_of_random_games_matches_the_schemas(name: str) -> None:
    seen: set[str] = set()
    game_entry = entry(name)
    for seats in range(game_entry.min_seats, game_entry.max_seats + 1):
        for seed in range(SEEDS):
            for game, events, where in playout(name, seats, seed):
                for seat in [None, *range(seats)]:
                    view = json.loads(json.dumps(game.view(seat)))
                    check(f"{name}.view", view, f"{where}, seat {seat}")
                    for action in view["legal"]:
                        check(f"{name}.actions", action, f"{where}, seat {seat}")
                for event in events:
                    check(f"{name}.events", json.loads(json.dumps(event)), where)
                    seen.add(event["type"])
    described = set(variants(f"{name}.events"))
    assert seen <= described
    assert described <= seen | event_types_in_source(name), \
        f"{name}: schemas of events the engine never makes: {sorted(described - seen)}"


def event_types_in_source(name: str) -> set[str]:
    """Every ``"type": "..."`` string in a dict literal of the game's package, minus its action
    types: the events the engine can make (action-named events are found by the playouts)."""
    package = import_module(entry(name).package)
    found: set[str] = set()
    for path in Path(package.__file__ or "").parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Dict):
                for key, value in zip(node.keys, node.values, strict=True):
                    if (isinstance(key, ast.Constant) and key.value == "type"
                            and isinstance(value, ast.Constant) and isinstance(value.value, str)):
                        found.add(value.value)
    return found - set(moves(name))


def moves(name: str) -> set[str]:
    """The action types of a game's engine."""
    cls = engine_class(name)
    assert issubclass(cls, Engine)
    return set(cls.moves)


@pytest.mark.parametrize("name", GAMES)
def test_every_event_type_in_the_engine_source_has_a_schema(name: str) -> None:
    missing = event_types_in_source(name) - set(variants(f"{name}.events"))
    assert not missing, f"{name} can emit events without a schema: {sorted(missing)}"


@pytest.mark.parametrize("name", GAMES)
def test_the_actions_schema_has_exactly_the_fields_the_engine_accepts(name: str) -> None:
    """One variant per move; its properties are the move's fields, the required ones its required."""
    root, cls = schema(f"{name}.actions"), engine_class(name)
    assert issubclass(cls, Engine)
    found = variants(f"{name}.actions")
    assert set(found) == set(cls.moves)
    for kind, move in cls.moves.items():
        definition = root["$defs"][found[kind]]
        assert set(definition["properties"]) - {"type"} == set(move.fields) | set(move.optional), kind
        assert set(definition["required"]) == {"type", *move.fields}, kind
        assert definition["additionalProperties"] is False, kind


def definitions(root: dict[str, Any], name: str) -> dict[str, Any]:
    """A definition of a schema with every definition it refers to, by name."""
    found: dict[str, Any] = {}
    waiting = [name]
    while waiting:
        current = waiting.pop()
        if current not in found:
            found[current] = root["$defs"][current]
            waiting += re.findall(r'"#/\$defs/(\w+)"', json.dumps(found[current]))
    return found


@pytest.mark.parametrize("name", GAMES)
def test_the_views_legal_actions_are_the_actions_schema(name: str) -> None:
    """A view lists its legal actions in the very definitions clients send them by."""
    view, actions = schema(f"{name}.view"), schema(f"{name}.actions")
    assert view["properties"]["legal"]["items"] == {"$ref": "#/$defs/Action"}
    assert view["$defs"]["Action"]["oneOf"] == actions["oneOf"]
    for definition in variants(f"{name}.actions").values():
        assert definitions(view, definition) == definitions(actions, definition), definition


@pytest.mark.parametrize("name", GAMES)
def test_an_unknown_view_key_event_or_action_is_refused(name: str) -> None:
    """The schemas are closed where the engines guarantee it, so codegen types are exact."""
    game_entry = entry(name)
    game = engine_class(name).new(game_entry.default_seats, {}, 1)
    seat = game.to_act()[0]
    view = json.loads(json.dumps(game.view(seat)))
    check(f"{name}.view", view, f"{name} start")
    assert not validator(f"{name}.view").is_valid({**view, "surprise": 1})
    assert not validator(f"{name}.events").is_valid({"type": "teleported", "seat": 0})
    assert not validator(f"{name}.actions").is_valid({"type": "teleport"})
    assert not validator(f"{name}.actions").is_valid({**view["legal"][0], "surprise": 1})

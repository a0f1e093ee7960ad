"""The JSON Schemas of each game's package (``schemas/``) describe every view and event it makes.

Client developers generate Swift and Kotlin types from these files, so a view
key or an event the schema does not describe would break their apps silently.
Seeded random playouts of every game in the catalogue check every view (every
seat and the spectator, every step) and every event against them; the source
scan makes a new event type without a schema fail even before a playout meets it.
"""

from __future__ import annotations

import ast
import json
import random
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
from shared.games.registry import engine_class
from tests.support.schemas import load_schema as schema

GAMES = sorted(CATALOGUE)
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


def extra_moves(game: Game, rng: random.Random) -> Iterator[tuple[int, dict[str, Any]]]:
    """Moves bots never choose but people make: Willi Stich's table talk, now and then a leave."""
    if not entry(game.name).leave_and_chat:
        return
    seat = rng.randrange(game.seat_count)
    if game.view(seat).get("chat_allowed") and rng.random() < 0.05:
        yield seat, {"type": "chat", "text": "gut gespielt"}
    active = game.view(None)["active"]
    if sum(active) > game.min_seats and active[seat] and rng.random() < 0.01:
        yield seat, {"type": "leave"}


def playout(name: str, seats: int, seed: int) -> Iterator[tuple[Game, list[Event], str]]:
    """A random playout to the end; yields the game after each commit, its events and a label."""
    cls = engine_class(name)
    rng = random.Random(f"{name}:{seats}:{seed}")
    options = {"round_seconds": 60} if name == "wie-waldi" else {}
    if name == "willi-stich" and seats > entry(name).min_seats:  # the smallest table plays all 19
        options = {"start_round": rng.randint(1, 19)}
    if name == "willi-wacker":  # a round or two: every kind of turn, duel and scoring
        options = {"target": 40}
    game = cls.new(seats, options, seed)
    yield game, [], f"{name} {seats} seats seed {seed} at the start"
    for step in range(100_000):
        if game.over:
            return
        for seat, action in extra_moves(game, rng):
            yield game, game.apply(seat, action), f"{name} seed {seed} step {step} ({action['type']})"
        if name == "wie-waldi" and rng.random() < 0.002:
            events = game.time_up()  # type: ignore[attr-defined]
        else:
            seat = rng.choice(game.to_act())
            events = game.apply(seat, rng.choice(game.view(seat)["legal"]))
        yield game, events, f"{name} {seats} seats seed {seed} step {step}"
    raise AssertionError(f"{name} seed {seed} did not end")


@pytest.mark.parametrize("name", GAMES)
def test_the_schemas_are_valid_draft_2020_12(name: str) -> None:
    for kind in ("view", "events"):
        Draft202012Validator.check_schema(schema(f"{name}.{kind}"))
    Draft202012Validator.check_schema(schema("table.events"))


@pytest.mark.parametrize("name", GAMES)
def test_every_view_and_event_of_random_games_matches_the_schemas(name: str) -> None:
    seen: set[str] = set()
    game_entry = entry(name)
    for seats in range(game_entry.min_seats, game_entry.max_seats + 1):
        for seed in range(SEEDS):
            for game, events, where in playout(name, seats, seed):
                for seat in [None, *range(seats)]:
                    check(f"{name}.view", json.loads(json.dumps(game.view(seat))), f"{where}, seat {seat}")
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
def test_the_view_schema_describes_exactly_the_engines_actions(name: str) -> None:
    assert set(variants(f"{name}.view")) == moves(name)


def test_an_unknown_view_key_or_event_is_refused() -> None:
    """The schemas are closed where the engines guarantee it, so codegen types are exact."""
    view = json.loads(json.dumps(engine_class("willi").new(4, {}, 1).view(0)))
    check("willi.view", view, "willi start")
    assert not validator("willi.view").is_valid({**view, "surprise": 1})
    assert not validator("willi.view").is_valid({**view, "hands": [["R0"], None, None, None]})
    assert not validator("willi.events").is_valid({"type": "played", "seat": 0, "card": "X1"})
    assert not validator("willi.events").is_valid({"type": "teleported", "seat": 0})

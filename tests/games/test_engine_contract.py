"""The contract every engine in the catalogue keeps, checked the same way for each.

As OpenSpiel tests every registered game: random seeded playouts to the end,
and at their steps: storage round trips, the stored JSON and ``copy()``, refusals that change
nothing, every listed legal action (and every turn-clock default) accepted,
views that are JSON data, carry a ``legal`` key and share nothing with the
state, and bad seats refused with RuleError. A new game in the catalogue is checked without a line here.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from shared.games.base import Action, Game
from shared.games.catalog import CATALOGUE
from shared.games.errors import RuleError
from shared.games.record import dumps
from shared.games.registry import engine_class

GAMES = sorted(CATALOGUE)
BAD_SEATS: list[Any] = [-1, 99, "0", True, 1.5, None]
#: Values a mutated action field may take: junk of every JSON type.
JUNK: list[Any] = [None, -1, 0, 10**9, "", "X9", "R1", "d1", "t1", [], ["B1"], {}, {"1": 0}, True, 2.5]
#: Steps of a playout that get every check; later steps are sampled (playouts can be long).
CHECKED_STEPS = 60
STORED = Path(__file__).with_name("stored_states.json")


def json_data(value: Any) -> Any:
    """The value as it comes back from JSON."""
    return json.loads(json.dumps(value))


def stored(game: Game) -> str:
    """The state as canonical JSON text, to compare before and after."""
    return json.dumps(game.to_dict(), sort_keys=True)


def scribble(value: Any) -> None:
    """Change every list and dict inside a view in place."""
    if isinstance(value, list):
        for item in value:
            scribble(item)
        value.append("scribbled")
    elif isinstance(value, dict):
        for item in value.values():
            scribble(item)
        value["scribbled"] = True


def seats_of(game: Game) -> list[int | None]:
    return [None, *range(game.seat_count)]


def check_storage(game: Game) -> None:
    """to_dict is JSON data, state_json its bytes; from_dict and copy() give the same game,
    independent of it."""
    data = game.to_dict()
    assert json_data(data) == data, "to_dict is not JSON data"
    assert game.state_json() == dumps(data), "state_json is not the JSON of to_dict"
    assert json_data(game.summary()) == game.summary(), "summary is not JSON data"
    restored = type(game).from_dict(json_data(data))
    assert restored.to_dict() == data and restored.summary() == game.summary()
    twin = game.copy()
    assert twin.to_dict() == data and twin is not game
    for seat in game.to_act()[:1]:
        twin.apply(seat, game.legal_actions(seat)[0])
        assert game.to_dict() == data, "playing on a copy changed the original"


def check_views(game: Game) -> None:
    """Every seat's and the spectators' view: JSON data, a legal key, no aliasing; made of
    its two halves, which share no key, and sent as the JSON of exactly that view."""
    before = stored(game)
    public = game.public_view()
    public_json = dumps(public)
    for seat in seats_of(game):
        view = game.view(seat)
        assert json_data(view) == view, f"view({seat}) is not JSON data"
        own = game.seat_view(seat)
        assert not public.keys() & own.keys(), f"view({seat}): both halves have {public.keys() & own.keys()}"
        assert json.loads(game.view_json(seat, public_json)) == view, f"view_json({seat}) differs"
        assert view["legal"] == ([] if seat is None else game.legal_actions(seat))
        kept = json_data(view)
        scribble(view)
        assert stored(game) == before, f"changing view({seat}) changed the game"
        assert game.view(seat) == kept, f"changing view({seat}) changed the next view"


def check_bad_seats(game: Game) -> None:
    """Seats outside the table are refused with RuleError, in views and actions."""
    before = stored(game)
    action = next((legal[0] for seat in range(game.seat_count)
                   if (legal := game.legal_actions(seat))), {"type": "pass"})
    for seat in BAD_SEATS[:-1]:
        with pytest.raises(RuleError):
            game.view(seat)
    for seat in BAD_SEATS:
        with pytest.raises(RuleError):
            game.apply(seat, action)
    assert stored(game) == before


def refused_or_accepted(game: Game, seat: int, action: Any) -> bool:
    """Apply to a copy: True if accepted; a refusal must leave the copy as it was."""
    trial = game.copy()
    before = stored(trial)
    try:
        trial.apply(seat, action)
    except RuleError:
        assert stored(trial) == before, f"refused {action} of seat {seat} changed the game"
        return False
    return True


def mutated(action: Action, rng: random.Random) -> dict[str, Any]:
    """The action with one field changed, dropped or added."""
    changed: dict[str, Any] = dict(action)
    name = rng.choice([*action, "extra"])
    if name != "type" and name in changed and rng.random() < 0.2:
        del changed[name]
    else:
        changed[name] = rng.choice([*JUNK, "pass", "play"]) if name == "type" else rng.choice(JUNK)
    return changed


def check_actions(game: Game, rng: random.Random) -> None:
    """Every listed legal action is accepted; wrong ones are refused without a change."""
    waiting = game.to_act()
    for seat in range(game.seat_count):
        legal = game.legal_actions(seat)
        for action in legal:
            assert refused_or_accepted(game, seat, action), f"legal {action} of {seat} refused"
        if not legal and not game.simultaneous:
            assert seat not in waiting or game.over
        for action in legal[:3]:
            refused_or_accepted(game, seat, mutated(action, rng))
        for other in [s for s in range(game.seat_count) if s not in waiting][:1]:
            for action in game.legal_actions(waiting[0])[:2] if waiting else []:
                assert not refused_or_accepted(game, other, action) or game.simultaneous
    for seat in waiting:  # what a turn clock applies must be accepted
        default = game.default_action(seat)
        assert default is not None or game.simultaneous, f"seat {seat} owes a move but has none"
        assert default is None or refused_or_accepted(game, seat, default), default
    assert not refused_or_accepted(game, 0, {"type": "no-such-move"})
    assert not refused_or_accepted(game, 0, {"type": ["pass"]})  # unhashable: was a TypeError
    assert not refused_or_accepted(game, 0, "not an action")


def check_all(game: Game, rng: random.Random) -> None:
    check_storage(game)
    check_views(game)
    check_bad_seats(game)
    check_actions(game, rng)


def playout(game: Game, rng: random.Random, max_steps: int = 100_000) -> int:
    """Random legal actions to the end, with every check on the first steps, then sampled."""
    for step in range(max_steps):
        if step < CHECKED_STEPS or rng.random() < 0.02:
            check_all(game, rng)
        if game.over:
            return step
        waiting = game.to_act()
        assert waiting, "nobody can act but the game is not over"
        seat = rng.choice(waiting) if game.simultaneous else waiting[0]
        legal = game.legal_actions(seat)
        assert legal, f"seat {seat} must act but has no legal action"
        game.apply(seat, rng.choice(legal))
    raise AssertionError(f"no end within {max_steps} actions")


@pytest.mark.parametrize("name", GAMES)
@pytest.mark.parametrize("size", ["fewest", "most"])
def test_random_playouts_keep_the_contract_to_the_end(name: str, size: str) -> None:
    cls = engine_class(name)
    seats = cls.min_seats if size == "fewest" else cls.max_seats
    rng = random.Random(f"{name}:{seats}")
    game = cls.new(seats, {}, rng.randrange(10_000))
    playout(game, rng)
    assert game.over and game.winners() and game.to_act() == []
    check_all(game, rng)


@pytest.mark.parametrize("name", GAMES)
def test_the_engine_class_agrees_with_its_catalogue_entry(name: str) -> None:
    cls, entry = engine_class(name), CATALOGUE[name]
    assert (cls.name, cls.min_seats, cls.max_seats, cls.simultaneous) == (
        entry.name, entry.min_seats, entry.max_seats, entry.simultaneous)
    assert entry.min_seats <= entry.default_seats <= entry.max_seats
    game = cls.new(entry.default_seats, entry.option_defaults(), 1)
    assert game.seat_count == entry.default_seats


@pytest.mark.parametrize("name", sorted(json.loads(STORED.read_text())))
def test_documents_stored_before_the_engine_base_still_load_and_play_on(name: str) -> None:
    """States written by the engines before the common base load, play on and store exactly
    as they did then (but for the ``retired`` fields a state has dropped since)."""
    case = json.loads(STORED.read_text())[name]
    retired = set(case.get("retired", []))
    game = engine_class(name).from_dict(case["stored"])
    assert game.to_dict() == {k: v for k, v in case["stored"].items() if k not in retired}
    for entry in case["actions"]:
        game.apply(entry["seat"], {key: value for key, value in entry.items() if key != "seat"})
    assert game.to_dict() == {k: v for k, v in case["after"].items() if k not in retired}
    assert json_data(game.view(0)) == case["view"]

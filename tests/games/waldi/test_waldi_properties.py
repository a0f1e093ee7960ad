"""Wie Waldi properties over thousands of random interleavings of several seats.

Each step a random seat (any seat, not only those listed by ``to_act``) tries a
random action: usually a legal one, sometimes with ``at``, often one that is
wrong. An independent oracle written from the refusal table of RULES.md says
what must happen, and the invariants are checked after every step.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from itertools import pairwise
from typing import Any

import pytest

from shared.games.errors import ErrorCode, RuleError
from shared.games.waldi.cards import card_sets
from shared.games.waldi.engine import WieWaldi

SETS = card_sets().sets
SORTED_SETS = [sorted(cards) for cards in SETS]
MALFORMED: list[dict[str, Any]] = [
    {"type": "draw", "pile": 3}, {"type": "draw", "pile": -1}, {"type": "draw"},
    {"type": "draw", "pile": "1"}, {"type": "return", "pile": 0}, {"type": "wuff"},
    {"type": "attach", "dog": "d1", "at": -1}, {"type": "attach", "dog": 1},
    {"type": "place_head", "card": "Hr"},
]


def expected_code(data: dict[str, Any], seat: int, action: dict[str, Any]) -> ErrorCode | None:
    """What RULES.md says about this action (None: accepted)."""
    kind, fields = action.get("type"), set(action) - {"type"}
    pile, at = action.get("pile"), action.get("at")
    malformed = {
        "draw": fields != {"pile"} or type(pile) is not int or not 0 <= pile < 3,
        "return": bool(fields), "place_head": bool(fields),
        "attach": (not {"dog"} <= fields <= {"dog", "at"} or type(action.get("dog")) is not str
                   or (at is not None and (type(at) is not int or at < 0))),
    }
    if not isinstance(kind, str) or malformed.get(kind, True):
        return ErrorCode.INVALID_ACTION
    if data["over"]:
        return ErrorCode.GAME_OVER
    held = data["held"][seat]
    if kind == "draw":
        return ErrorCode.NOT_ALLOWED if held or not data["piles"][seat][pile] else None
    if kind == "return":
        return None if held else ErrorCode.NOT_ALLOWED
    if kind == "place_head":
        return None if held and held[0] == "H" else ErrorCode.NOT_ALLOWED
    dog = next((d for d in data["dogs"] if d["id"] == action["dog"]), None)
    if dog is None or dog["complete"]:
        return ErrorCode.CARD_NOT_IN_HAND
    if at is not None and at != len(dog["cards"]):
        return ErrorCode.STALE
    end = dog["cards"][-1][-1]
    if held and held[0] != "H" and held[1] != end:
        return ErrorCode.NO_MATCH
    return None if held and held[0] != "H" else ErrorCode.NOT_ALLOWED


def some_action(game: WieWaldi, data: dict[str, Any], seat: int,
                rng: random.Random) -> dict[str, Any]:
    """Mostly legal (sometimes with ``at``), otherwise anything, right or wrong."""
    legal = game.legal_actions(seat)
    roll = rng.random()
    if legal and roll < 0.6:
        action = dict(rng.choice(legal))
        if action["type"] == "attach" and rng.random() < 0.5:
            dog = next(d for d in data["dogs"] if d["id"] == action["dog"])
            action["at"] = len(dog["cards"])
        return action
    if roll < 0.7:
        return dict(rng.choice(MALFORMED))
    dogs = data["dogs"]
    ids = [d["id"] for d in dogs] + [f"d{len(dogs) + 1}"]
    pool: list[dict[str, Any]] = [{"type": "draw", "pile": p} for p in range(3)]
    pool += [{"type": "return"}, {"type": "place_head"}]
    pool += [{"type": "attach", "dog": i} for i in ids]
    pool += [{"type": "attach", "dog": i, "at": rng.randrange(0, 6)} for i in ids]
    return rng.choice(pool)


def check_cards_conserved(data: dict[str, Any]) -> None:
    """Every card of every set is in exactly one place: piles, hand, dogs or discarded."""
    for seat in range(data["seats"]):
        places = [c for pile in data["piles"][seat] for c in pile]
        places += [data["held"][seat]] if data["held"][seat] else []
        places += [c for d in data["dogs"] for c, by in zip(d["cards"], d["by"], strict=True)
                   if by == seat]
        places += data["discarded"][seat]
        assert sorted(places) == SORTED_SETS[seat], f"seat {seat}'s cards are not all there"
        if not data["over"]:
            assert data["discarded"][seat] == []


def check_table(data: dict[str, Any]) -> None:
    """Dogs match colour by colour, tokens follow tails, a live round is no dead end."""
    laid_tails = Counter()
    for dog in data["dogs"]:
        cards = dog["cards"]
        assert cards[0][0] == "H" and all(c[0] != "H" for c in cards[1:])
        assert all(a[-1] == b[1] for a, b in pairwise(cards))
        assert dog["complete"] == (cards[-1][0] in "TC")
        if dog["complete"]:
            laid_tails[dog["by"][-1]] += 1
            owner = dog["by"][-1] if cards[-1][0] == "C" else dog["by"][0]
            assert dog["owner"] == owner
    if not data["over"]:
        assert data["tokens_left"] == [6 - laid_tails[s] for s in range(data["seats"])]
        ends = {d["cards"][-1][-1] for d in data["dogs"] if not d["complete"]}
        unplayed = [c for s in range(data["seats"]) for p in data["piles"][s] for c in p]
        unplayed += [c for c in data["held"] if c]
        assert any(c[0] == "H" or c[1] in ends for c in unplayed), "a dead end went unnoticed"


def check_events(events: list[dict[str, Any]], action: dict[str, Any]) -> None:
    json.dumps(events)
    for event in events:
        if event["type"] in ("draw", "return"):
            assert set(event) == {"type", "seat", "pile"}
    if action["type"] in ("place_head", "attach"):
        assert events[0]["type"] == action["type"]


def scrambled(data: dict[str, Any], seat: int | None, rng: random.Random) -> dict[str, Any]:
    """The same public table with every card the seat may not see shuffled around."""
    other = json.loads(json.dumps(data))
    n = data["seats"]
    hidden = [o for o in range(n) if o != seat and other["held"][o]]
    pool = [c for s in range(n) for p in other["piles"][s] for c in p]
    pool += [other["held"][o] for o in hidden] + [c for s in SETS[:n] for c in s[:7]]
    rng.shuffle(pool)
    for s in range(n):
        other["piles"][s] = [[pool.pop() for _ in p] for p in other["piles"][s]]
    for o in hidden:
        other["held"][o] = pool.pop()
    return other


def check_views_hide(game: WieWaldi, data: dict[str, Any], rng: random.Random) -> None:
    for seat in [*range(data["seats"]), None]:
        twin = WieWaldi.from_dict(scrambled(data, seat, rng))
        assert twin.view(seat) == game.view(seat), f"view({seat}) depends on hidden cards"


def check_round_trip(game: WieWaldi, data: dict[str, Any]) -> None:
    copy_ = WieWaldi.from_dict(json.loads(json.dumps(data)))
    assert copy_.to_dict() == data and copy_.summary() == game.summary()


def interleave(seed: int, seats: int, steps: int, deep_every: int) -> WieWaldi:
    """Run a random interleaving, checking every step; deep checks every few steps."""
    rng = random.Random(seed)
    timed = seed % 5 == 0
    game = WieWaldi.new(seats, {"round_seconds": 60} if timed else {}, seed)
    data = game.to_dict()
    for step in range(steps):
        if game.over:
            break
        seat = rng.randrange(seats)
        action = some_action(game, data, seat, rng)
        want = expected_code(data, seat, action)
        plain = {k: v for k, v in action.items() if k != "at"}
        assert (plain in game.legal_actions(seat)) == (expected_code(data, seat, plain) is None)
        try:
            events = game.apply(seat, action)
        except RuleError as err:
            assert err.code == want, (action, err.message)
            assert game.to_dict() == data, "a refused action changed the state"
            continue
        assert want is None, (action, want)
        check_events(events, action)
        if timed and rng.random() < 0.002:
            check_events(game.time_up(), {"type": "time_up"})
        data = game.to_dict()
        check_cards_conserved(data)
        check_table(data)
        assert game.to_act() == [s for s in range(seats) if game.legal_actions(s)]
        if step % deep_every == 0:
            check_round_trip(game, data)
            check_views_hide(game, data, rng)
    return game


@pytest.mark.slow
@pytest.mark.parametrize("seats", [2, 3, 4])
def test_short_interleavings(seats: int) -> None:
    for seed in range(500):
        interleave(seed * 10 + seats, seats, steps=100, deep_every=25)


@pytest.mark.slow
@pytest.mark.parametrize("seats", [2, 3, 4])
def test_whole_games_end(seats: int) -> None:
    for seed in range(4):
        game = interleave(seed * 10 + seats, seats, steps=40_000, deep_every=60)
        assert game.over and game.winners()
        data = game.to_dict()
        assert len(data["completed_rounds"]) == 3
        assert data["scores"] == [sum(r["points"][s] for r in data["completed_rounds"])
                                  for s in range(seats)]
        check_round_trip(game, data)

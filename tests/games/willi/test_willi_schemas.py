"""Willi's schemas know its cards: a card the deck has not is refused in views and events."""

from __future__ import annotations

import json

from jsonschema import Draft202012Validator

from shared.games.willi.engine import Willi
from tests.support.schemas import load_schema


def test_a_card_not_in_the_deck_is_refused() -> None:
    view = json.loads(json.dumps(Willi.new(4, {}, 1).view(0)))
    views = Draft202012Validator(load_schema("willi.view"))
    events = Draft202012Validator(load_schema("willi.events"))
    assert views.is_valid(view)
    assert not views.is_valid({**view, "hands": [["R0"], None, None, None]})
    assert events.is_valid({"type": "played", "seat": 0, "card": "R1"})
    assert not events.is_valid({"type": "played", "seat": 0, "card": "X1"})

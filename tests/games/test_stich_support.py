"""Small builders shared by the Willi Stich tests (no tests of its own)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from shared.games.errors import ErrorCode, RuleError
from shared.games.stich.engine import WilliStich


def dealt(hands: list[list[str]], turned: str | None = "C7", round_no: int = 3,
          dealer: int = 0, seed: int = 0) -> WilliStich:
    """A game whose first round (``round_no``) is dealt exactly as given."""
    return WilliStich.new(len(hands), {"start_round": round_no, "first_dealer": dealer}, seed,
                          {"rounds": [{"hands": hands, "turned": turned}]})


def act(game: WilliStich, seat: int, kind: str, **fields: Any) -> list[dict[str, Any]]:
    """Apply one action that must be accepted; return its events."""
    return game.apply(seat, {"type": kind, **fields})


def refused(game: WilliStich, seat: int, action: dict[str, Any], code: ErrorCode) -> str:
    """Assert the action is refused with ``code`` and changes nothing; return the message."""
    before = json.dumps(game.to_dict(), sort_keys=True)
    with pytest.raises(RuleError) as caught:
        game.apply(seat, action)
    assert caught.value.code == code, caught.value.message
    assert json.dumps(game.to_dict(), sort_keys=True) == before
    return caught.value.message


def call_in_turn(game: WilliStich, calls: dict[int, int]) -> None:
    """Let every seat call in its turn (calls by seat)."""
    while game.summary()["phase"] == "call":
        seat = game.to_act()[0]
        act(game, seat, "call", tricks=calls[seat])


def finish_round(game: WilliStich) -> list[dict[str, Any]]:
    """Apply turn-clock defaults until the current round is over; return all events."""
    start, events = game.summary()["round"], []
    while not game.over and game.summary()["round"] == start:
        seat = game.to_act()[0]
        action = game.default_action(seat)
        assert action is not None
        events += game.apply(seat, action)
    return events

"""Small builders shared by the Willi Stich tests (no tests of its own)."""

from __future__ import annotations

from typing import Any

from shared.games.stich.engine import WilliStich
from tests.support.engines import act


def dealt(hands: list[list[str]], turned: str | None = "C7", round_no: int = 3,
          dealer: int = 0, seed: int = 0) -> WilliStich:
    """A game whose first round (``round_no``) is dealt exactly as given."""
    return WilliStich.new(len(hands), {"start_round": round_no, "first_dealer": dealer}, seed,
                          {"rounds": [{"hands": hands, "turned": turned}]})




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

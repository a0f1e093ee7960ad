"""Small builders shared by the Willi Wacker tests (no tests of its own)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from shared.games.wacker.cards import DECK_COUNTS
from shared.games.wacker.engine import WilliWacker
from tests.support.engines import act


def dealt(hands: list[list[str]], talon: list[str] | None = None, dealer: int | None = None,
          seed: int = 0, **options: Any) -> WilliWacker:
    """A game dealt exactly as given; by default the last seat deals, so seat 0 starts."""
    first = len(hands) - 1 if dealer is None else dealer
    return WilliWacker.new(len(hands), {"first_dealer": first, **options}, seed,
                           {"rounds": [{"hands": hands, "talon": talon or []}]})




def drained(game: WilliWacker, keep: int = 0) -> WilliWacker:
    """The same game with all but ``keep`` talon cards moved to the discard pile."""
    data = game.to_dict()
    data["discard"] += data["talon"][keep:]
    data["talon"] = data["talon"][:keep]
    return WilliWacker.from_dict(data)


def all_cards(game: WilliWacker) -> Counter[str]:
    """Every card of the round: hands, talon, trays (face up and drunk), discard pile."""
    state = game.state
    cards: Counter[str] = Counter(state.talon) + Counter(state.discard)
    for hand in state.hands:
        cards.update(hand)
    for tray in state.trays:
        cards.update(tray.cards)
    return cards


def conserved(game: WilliWacker) -> bool:
    """True if the 110 cards are all somewhere, each exactly once."""
    return all_cards(game) == DECK_COUNTS


def kinds(events: list[dict[str, Any]]) -> list[str]:
    """The event types in order."""
    return [event["type"] for event in events]


def lay_any(game: WilliWacker, seat: int) -> None:
    """Lay the seat's first beer card as a one-card tray (always legal on turn)."""
    card = next(card for card in game.state.hands[seat] if card.startswith("B"))
    act(game, seat, "lay", cards=[card])


def empty_hand(game: WilliWacker, seat: int) -> None:
    """Move a hand to the discard pile (as if the seat had answered with its last cards)."""
    game.state.discard.extend(game.state.hands[seat])
    game.state.hands[seat] = []

"""Dealing: explicit deals from a scenario's setup, otherwise shuffled from the seed."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from shared.games.base import derived_rng
from shared.games.errors import SetupError
from shared.games.willi.cards import full_deck, is_card
from shared.games.willi.rules import POSITIONS, ROUNDS

HAND_SIZE = 9


def parse_setup(setup: Mapping[str, Any] | None) -> list[list[list[str]]]:
    """The explicit deals of ``{"rounds": [{"hands": [[9 cards] x 4]}, ...]}``, checked.

    Every listed deal must use all 36 cards exactly once; anything else makes
    the whole setup unusable (SetupError), because a game cannot start from it.
    """
    if not setup:
        return []
    if not isinstance(setup, Mapping) or set(setup) - {"rounds"}:
        raise SetupError("willi setup takes only 'rounds'")
    rounds = setup.get("rounds", [])
    if not isinstance(rounds, list) or len(rounds) > ROUNDS:
        raise SetupError(f"setup 'rounds' must be a list of at most {ROUNDS} deals")
    return [_parse_deal(number, entry) for number, entry in enumerate(rounds, start=1)]


def _parse_deal(number: int, entry: object) -> list[list[str]]:
    if not isinstance(entry, Mapping) or set(entry) != {"hands"}:
        raise SetupError(f"deal {number}: expected an object with exactly 'hands'")
    hands = entry["hands"]
    if (not isinstance(hands, list) or len(hands) != POSITIONS
            or not all(isinstance(hand, list) and len(hand) == HAND_SIZE for hand in hands)):
        raise SetupError(f"deal {number}: 'hands' must be {POSITIONS} lists of {HAND_SIZE} cards")
    cards = [card for hand in hands for card in hand]
    if not all(is_card(card) for card in cards) or sorted(cards) != sorted(full_deck()):
        raise SetupError(f"deal {number}: the hands must hold all 36 cards exactly once")
    return [list(hand) for hand in hands]


def deal_round(seed: int, round_no: int, explicit: list[list[list[str]]]) -> list[list[str]]:
    """Hands for a round: the explicit deal if the setup lists it, else a seeded shuffle.

    With 3 people, hand 3 is the monster's face-down stack, top card first.
    """
    if round_no <= len(explicit):
        return [list(hand) for hand in explicit[round_no - 1]]
    deck = full_deck()
    derived_rng(seed, "deal", round_no).shuffle(deck)
    return [deck[i * HAND_SIZE:(i + 1) * HAND_SIZE] for i in range(POSITIONS)]

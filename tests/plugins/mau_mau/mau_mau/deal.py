"""The deal: an explicit one from a scenario's setup, otherwise the shuffled deck from the seed."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mau_mau.cards import full_deck, is_card, sorted_hand
from shared.games.base import derived_rng
from shared.games.errors import SetupError


@dataclass(frozen=True)
class Deal:
    """The cards at the start: the hands, the turned-up card and the stock (top first)."""

    hands: list[list[str]]
    up: str
    stock: list[str]


def deal(seats: int, hand_size: int, seed: int, setup: Mapping[str, Any] | None) -> Deal:
    """The explicit deal of the setup if there is one, else ``hand_size`` cards to each seat
    from the deck shuffled by the seed (SetupError when the deck is too small for that)."""
    if setup:
        return parse_setup(seats, setup)
    if seats * hand_size + 1 > len(full_deck()):
        raise SetupError(f"{seats} seats with {hand_size} cards each need more than 32 cards")
    deck = full_deck()
    derived_rng(seed, "deal").shuffle(deck)
    hands = [sorted_hand(deck[seat * hand_size:(seat + 1) * hand_size]) for seat in range(seats)]
    rest = deck[seats * hand_size:]
    return Deal(hands, rest[0], rest[1:])


def parse_setup(seats: int, setup: Mapping[str, Any]) -> Deal:
    """The deal of ``{"hands": [[card, ...] per seat], "up": card, "stock": [card, ...]}``.

    Every hand must hold at least one card and no card may appear twice; cards the setup
    does not name are out of the game (short scenarios need no full deck). Anything else
    makes the setup unusable (SetupError): a game cannot start from it.
    """
    if not isinstance(setup, Mapping) or set(setup) != {"hands", "up", "stock"}:
        raise SetupError("mau-mau setup takes exactly 'hands', 'up' and 'stock'")
    hands, up, stock = setup["hands"], setup["up"], setup["stock"]
    if (not isinstance(hands, list) or len(hands) != seats
            or not all(isinstance(hand, list) and hand for hand in hands)):
        raise SetupError(f"setup 'hands' must be {seats} lists of at least one card")
    if not isinstance(stock, list):
        raise SetupError("setup 'stock' must be a list of cards")
    cards = [*(card for hand in hands for card in hand), up, *stock]
    if not all(is_card(card) for card in cards) or len(set(cards)) != len(cards):
        raise SetupError("the setup must name cards of the 32-card deck, each at most once")
    return Deal([sorted_hand(hand) for hand in hands], up, list(stock))

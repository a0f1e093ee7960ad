"""The 32-card deck: suit letter then rank, as the rules write cards ("H10", "SJ", "C7")."""

from __future__ import annotations

from collections.abc import Iterable

SUITS = ("C", "S", "H", "D")
RANKS = ("7", "8", "9", "10", "J", "Q", "K", "A")
JACK = "J"
#: Playing a 7 makes the next seat draw this many cards (and lose its turn).
SEVEN_PENALTY = 2


def full_deck() -> list[str]:
    """All 32 cards in hand order: by suit (C, S, H, D), then rank (7 .. A)."""
    return [suit + rank for suit in SUITS for rank in RANKS]


DECK = frozenset(full_deck())


def is_card(value: object) -> bool:
    """True for a card in the exact notation of the rules (nothing else is understood)."""
    return isinstance(value, str) and value in DECK


def suit(card: str) -> str:
    """The suit letter."""
    return card[0]


def rank(card: str) -> str:
    """The rank: 7, 8, 9, 10, J, Q, K or A."""
    return card[1:]


def sort_key(card: str) -> tuple[int, int]:
    """Where a card goes in a sorted hand: suit first, then rank."""
    return SUITS.index(suit(card)), RANKS.index(rank(card))


def sorted_hand(cards: Iterable[str]) -> list[str]:
    """The cards in hand order."""
    return sorted(cards, key=sort_key)


def matches(card: str, top: str, wish: str | None) -> bool:
    """Whether ``card`` may go on ``top``: a J on anything but a J; any other card must
    follow the wished suit if a J asked for one, else the top card's suit or rank."""
    if rank(card) == JACK:
        return rank(top) != JACK
    if wish is not None:
        return suit(card) == wish
    return suit(card) == suit(top) or rank(card) == rank(top)

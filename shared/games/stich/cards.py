"""Card notation of Willi Stich: suit letter + rank, two identical copies of each card."""

from __future__ import annotations

SUITS: tuple[str, ...] = ("C", "S", "H", "D")
RANKS: tuple[str, ...] = ("7", "8", "9", "10", "J", "Q", "K", "A")
_RANK_ORDER = {rank: index for index, rank in enumerate(RANKS)}

#: Both 32-card decks; every card exists twice and the copies are written the same.
DECK: tuple[str, ...] = tuple(suit + rank for suit in SUITS for rank in RANKS) * 2
COPIES = 2


def is_card(text: object) -> bool:
    """True for a string in card notation, e.g. ``"H10"`` or ``"SA"``."""
    return isinstance(text, str) and len(text) >= 2 and text[0] in SUITS and text[1:] in _RANK_ORDER


def suit_of(card: str) -> str:
    """The suit letter of a card."""
    return card[0]


def rank_of(card: str) -> int:
    """The rank of a card as 0 (seven) .. 7 (ace), for comparisons."""
    return _RANK_ORDER[card[1:]]


def sort_key(card: str) -> tuple[int, int]:
    """Order for showing a hand: by suit, then by rank."""
    return SUITS.index(suit_of(card)), rank_of(card)


def sorted_cards(cards: list[str]) -> list[str]:
    """A hand in display order."""
    return sorted(cards, key=sort_key)

"""The 36 number cards and their notation: colour letter + value, e.g. ``R5``.

Cards stay plain strings everywhere (state, events, views) so that they are
JSON as they are; these helpers are the only place that knows their shape.
"""

from __future__ import annotations

COLOURS = "RYGB"
VALUES = range(1, 10)


def is_card(text: object) -> bool:
    """True for exact notation (``R5``, never ``r5`` or ``R10``)."""
    return (isinstance(text, str) and len(text) == 2 and text[0] in COLOURS
            and text[1].isdigit() and text[1] != "0")


def colour(card: str) -> str:
    """The colour letter of a card."""
    return card[0]


def value(card: str) -> int:
    """The number of a card, 1..9."""
    return int(card[1])


def same_colour_or_value(card: str, other: str) -> bool:
    """True when two cards share colour or number (compares notation directly: a hot path)."""
    return card[0] == other[0] or card[1] == other[1]


def full_deck() -> list[str]:
    """All 36 cards in notation order."""
    return [f"{c}{v}" for c in COLOURS for v in VALUES]


def sort_key(card: str) -> tuple[int, int]:
    """Orders a hand by colour (R, Y, G, B) then value, as players sort theirs."""
    return COLOURS.index(card[0]), value(card)


def sorted_hand(cards: list[str]) -> list[str]:
    """A hand in display order."""
    return sorted(cards, key=sort_key)

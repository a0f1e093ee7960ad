"""The 110-card deck as data, and the card notation (``B1``..``B8`` and action names).

The published rules give no card counts; the split below is the project's ruling.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

TRINK = "TRINK"
SCHNORRER = "SCHNORRER"
FLORA = "FLORA"
PRUEGEL = "PRUEGEL"
ZAPFENSTREICH = "ZAPFENSTREICH"

#: Beer values 1..8, ten cards each.
BEER_VALUES = range(1, 9)
BEERS_PER_VALUE = 10
#: Action cards and how many of each the deck holds.
ACTION_COUNTS: dict[str, int] = {
    TRINK: 12,
    SCHNORRER: 4,
    FLORA: 5,
    PRUEGEL: 6,
    ZAPFENSTREICH: 3,
}
#: Action cards that name a tray as their target.
TRAY_ACTIONS = frozenset({TRINK, FLORA, ZAPFENSTREICH})
#: Cards a seat may answer a duel with.
ANSWERS = frozenset({PRUEGEL, ZAPFENSTREICH})
HAND_SIZE = 7


def beer(value: int) -> str:
    """Notation of the beer card with ``value`` beers."""
    return f"B{value}"


#: The complete deck in a fixed order (shuffled per round from the seed).
DECK: tuple[str, ...] = tuple(
    [beer(v) for v in BEER_VALUES for _ in range(BEERS_PER_VALUE)]
    + [name for name, count in ACTION_COUNTS.items() for _ in range(count)]
)
DECK_COUNTS: Counter[str] = Counter(DECK)


def is_card(text: object) -> bool:
    """True for any notation the deck contains (``B1``..``B8`` or an action name)."""
    return isinstance(text, str) and text in DECK_COUNTS


_VALUES: dict[str, int] = {beer(v): v for v in BEER_VALUES}


def beer_value(card: str) -> int | None:
    """The number of beers of a beer card, None for an action card."""
    return _VALUES.get(card)


def is_beer(card: str) -> bool:
    """True for a beer card."""
    return beer_value(card) is not None


def beers(cards: Iterable[str]) -> int:
    """Total beers on the given cards (action cards count 0)."""
    return sum(beer_value(card) or 0 for card in cards)


def sorted_beers(cards: Iterable[str]) -> list[str]:
    """Beer cards in ascending value: how trays and legal actions list them."""
    return sorted(cards, key=lambda card: beer_value(card) or 0)


_ACTION_ORDER = {name: index for index, name in enumerate(ACTION_COUNTS)}


def sort_key(card: str) -> tuple[int, int]:
    """Order for showing a hand: beers by value, then action cards in the deck's order."""
    value = beer_value(card)
    if value is not None:
        return 0, value
    return 1, _ACTION_ORDER.get(card, len(_ACTION_ORDER))


def holds(hand: Iterable[str], cards: Iterable[str]) -> bool:
    """True if ``hand`` contains every card of ``cards`` (as a multiset)."""
    return not Counter(cards) - Counter(hand)


def without(hand: list[str], cards: Iterable[str]) -> list[str]:
    """``hand`` minus one copy of each of ``cards``, the order of the rest kept."""
    rest = list(hand)
    for card in cards:
        rest.remove(card)
    return rest

"""Sets and runs: which beer cards form a tray, and which extend one.

A tray is a *set* (equal values) or a *run* (consecutive values 1..8, no
wrap-around). Extending keeps that shape, so a run can only grow at its ends;
a one-card tray is both and may become either.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from shared.games.wacker.cards import BEER_VALUES, beer, beer_value


def forms_group(cards: Iterable[str]) -> bool:
    """True if the cards are all beers forming one set or one run."""
    values = [beer_value(card) for card in cards]
    if not values or None in values:
        return False
    ordered = sorted(v for v in values if v is not None)
    if ordered[0] == ordered[-1]:
        return True
    return ordered == list(range(ordered[0], ordered[0] + len(ordered)))


def extends(tray: Iterable[str], cards: Iterable[str]) -> bool:
    """True if adding ``cards`` (at least one) keeps ``tray`` a set or a run."""
    added = list(cards)
    return bool(added) and forms_group([*tray, *added])


def _counts(hand: Iterable[str]) -> Counter[int]:
    return Counter(v for v in map(beer_value, hand) if v is not None)


def _span(low: int, high: int) -> list[str]:
    return [beer(v) for v in range(low, high + 1)]


def lay_options(hand: Iterable[str]) -> list[list[str]]:
    """Every distinct new tray the hand can lay: sets of each size, runs of each span."""
    counts = _counts(hand)
    options = [[beer(v)] * k for v in BEER_VALUES for k in range(1, counts[v] + 1)]
    for low in BEER_VALUES:
        high = low
        while counts[high] and counts[high + 1]:
            high += 1
            options.append(_span(low, high))
    return options


def extension_options(tray: Iterable[str], hand: Iterable[str]) -> list[list[str]]:
    """Every distinct set of hand cards that extends ``tray`` (ascending order)."""
    values = sorted(v for v in map(beer_value, tray) if v is not None)
    counts = _counts(hand)
    low, high = values[0], values[-1]
    options: list[list[str]] = []
    if low == high:
        options += [[beer(low)] * k for k in range(1, counts[low] + 1)]
    if len(values) == 1 or low != high:
        lows = [low]
        while lows[-1] - 1 >= 1 and counts[lows[-1] - 1]:
            lows.append(lows[-1] - 1)
        highs = [high]
        while highs[-1] + 1 <= 8 and counts[highs[-1] + 1]:
            highs.append(highs[-1] + 1)
        options += [_span(start, low - 1) + _span(high + 1, end)
                    for start in lows for end in highs if (start, end) != (low, high)]
    return options

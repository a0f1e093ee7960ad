"""Sets and runs: which beer cards form a tray, and which extend one.

A tray is a *set* (equal values) or a *run* (consecutive values 1..8, no
wrap-around). Extending keeps that shape, so a run can only grow at its ends;
a one-card tray is both and may become either.
"""

from __future__ import annotations

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


def beer_counts(hand: Iterable[str]) -> list[int]:
    """Beer cards per value, indexed 0..9 (0 and 9 stay 0 and end every run)."""
    counts = [0] * 10
    for card in hand:
        value = beer_value(card)
        if value:
            counts[value] += 1
    return counts


def _span(low: int, high: int) -> list[str]:
    return [beer(v) for v in range(low, high + 1)]


def lay_options(counts: list[int]) -> list[list[str]]:
    """Every distinct new tray a hand with these ``beer_counts`` can lay: sets, then runs."""
    options = [[beer(v)] * k for v in BEER_VALUES for k in range(1, counts[v] + 1)]
    for low in BEER_VALUES:
        high = low
        while counts[high] and counts[high + 1]:
            high += 1
            options.append(_span(low, high))
    return options


def extension_options(tray: Iterable[str], counts: list[int]) -> list[list[str]]:
    """Every distinct set of cards (ascending) from a hand with these ``beer_counts``
    that extends ``tray``."""
    values = [v for v in map(beer_value, tray) if v is not None]
    low, high = min(values), max(values)
    options: list[list[str]] = []
    if low == high:
        options += [[beer(low)] * k for k in range(1, counts[low] + 1)]
    if len(values) == 1 or low != high:
        start = low
        while counts[start - 1]:
            start -= 1
        end = high
        while counts[end + 1]:
            end += 1
        options += [_span(first, low - 1) + _span(high + 1, last)
                    for first in range(low, start - 1, -1) for last in range(high, end + 1)
                    if (first, last) != (low, high)]
    return options

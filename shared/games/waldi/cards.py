"""Wie Waldi cards: the notation and the players' sets.

Notation: head ``H`` + colour (``Hr``), middle ``M`` + left + right colour
(``Mrg``), tail ``T`` + colour (``Tb``), tail with the cat ``C`` + colour
(``Cy``). The rulebook never lists the cover colours, so every set's 30 cards
live in ``card_sets.json``: a real set's list replaces them without code.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

HEAD = "H"
MIDDLE = "M"
TAIL = "T"
CAT = "C"
#: Cards of each kind in one set, as the rulebook's box contents list them.
COMPOSITION: dict[str, int] = {HEAD: 7, MIDDLE: 16, TAIL: 4, CAT: 3}
SET_SIZE = sum(COMPOSITION.values())
DATA_PACKAGE = "shared.games.waldi"
DATA_FILE = "card_sets.json"


def is_head(card: str) -> bool:
    """Heads start dogs and never attach."""
    return card[0] == HEAD


def is_tail(card: str) -> bool:
    """Tails (with or without the cat) complete a dog."""
    return card[0] in (TAIL, CAT)


def has_cat(card: str) -> bool:
    """A tail with the cat gives the dog to whoever laid the tail."""
    return card[0] == CAT


def left_colour(card: str) -> str | None:
    """The colour at the left edge, which must equal the dog's open end; heads have none."""
    return None if card[0] == HEAD else card[1]


def right_colour(card: str) -> str | None:
    """The colour at the right edge: a dog's open end. Tails have none."""
    if card[0] == HEAD:
        return card[1]
    if card[0] == MIDDLE:
        return card[2]
    return None


class CardDataError(ValueError):
    """The card data does not describe valid sets."""


@dataclass(frozen=True)
class CardSets:
    """The cover colours and the set of every seat (``sets[s]`` belongs to seat ``s``)."""

    colours: tuple[str, ...]
    sets: tuple[tuple[str, ...], ...]

    def is_card(self, text: object) -> bool:
        """True for well-formed notation in this data's colours."""
        if not isinstance(text, str) or not text or text[0] not in COMPOSITION:
            return False
        colours = text[1:]
        width = 2 if text[0] == MIDDLE else 1
        return len(colours) == width and all(c in self.colours for c in colours)


def parse_card_sets(raw: Any) -> CardSets:
    """Check the data's shape and every set's composition; refuse anything else."""
    if not isinstance(raw, dict):
        raise CardDataError("card data must be an object")
    colours = raw.get("colours")
    if (not isinstance(colours, list) or not colours
            or not all(isinstance(c, str) and len(c) == 1 for c in colours)
            or len(set(colours)) != len(colours)):
        raise CardDataError("'colours' must list distinct one-letter colours")
    sets = raw.get("sets")
    if not isinstance(sets, list) or not sets:
        raise CardDataError("'sets' must list the players' sets")
    result = CardSets(tuple(colours), tuple(tuple(s) if isinstance(s, list) else () for s in sets))
    for index, cards in enumerate(result.sets):
        if len(cards) != SET_SIZE or not all(result.is_card(c) for c in cards):
            raise CardDataError(f"set {index} must hold {SET_SIZE} cards in valid notation")
        kinds = Counter(card[0] for card in cards)
        if kinds != Counter(COMPOSITION):
            raise CardDataError(f"set {index} must have {COMPOSITION} cards by kind")
    return result


@lru_cache(maxsize=1)
def card_sets() -> CardSets:
    """The sets shipped with the package (read once)."""
    text = resources.files(DATA_PACKAGE).joinpath(DATA_FILE).read_text(encoding="utf-8")
    return parse_card_sets(json.loads(text))

"""Round scoring in bone points, and the game's winners.

Places by competition ranking of cards won (equal counts share a place, the
next place is skipped): gold 3, silver 2, bronze 1, fourth place nothing.
Ruling: a seat that won no cards gets no place bone. Emptying at least one of
one's three piles earns an extra bronze.
"""

from __future__ import annotations

from collections.abc import Sequence

#: Bone points for places 1, 2 and 3.
PLACE_BONES = (3, 2, 1)
PILE_BONUS = 1


def place_points(cards_won: Sequence[int]) -> list[int]:
    """Bone points per seat for its place; 0 cards earn nothing (ruling)."""
    points = []
    for count in cards_won:
        place = 1 + sum(1 for other in cards_won if other > count)
        earns = count > 0 and place <= len(PLACE_BONES)
        points.append(PLACE_BONES[place - 1] if earns else 0)
    return points


def round_points(cards_won: Sequence[int], emptied_a_pile: Sequence[bool]) -> list[int]:
    """Place bone plus the pile bonus, per seat."""
    return [place + (PILE_BONUS if emptied else 0)
            for place, emptied in zip(place_points(cards_won), emptied_a_pile, strict=True)]


def winners(scores: Sequence[int]) -> list[int]:
    """Every seat with the highest total (ties share the win)."""
    best = max(scores)
    return [seat for seat, score in enumerate(scores) if score == best]

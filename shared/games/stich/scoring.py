"""Points of a round and the winners of a game."""

from __future__ import annotations

MADE_ZERO = 5
PER_TRICK = 10


def round_points(call: int, taken: int) -> int:
    """+10 per trick for a made call, +5 for a made zero, -10 per trick of difference."""
    if call == taken:
        return PER_TRICK * call if call else MADE_ZERO
    return -PER_TRICK * abs(call - taken)


def best_seats(scores: list[int]) -> list[int]:
    """Every seat with the highest total (frozen totals of seats that left included)."""
    best = max(scores)
    return [seat for seat, score in enumerate(scores) if score == best]

"""Multiplayer Elo: every finished game is a round robin of two-player matches.

Each pair of people at the table is scored like one chess game, decided by
their final totals (higher total wins the pair, equal totals are a draw worth
half). A player's change is the sum of its pairwise Elo changes, scaled by
``K / (n - 1)`` so one game moves a rating about as much as one two-player
game would, however many people sat at the table. Because each pair's changes
cancel (S_ab + S_ba = 1 and E_ab + E_ba = 1), the sum of the ratings of the
people of one game never changes.

K = 32 is the classic club value: new players (everyone starts at 1500) find
their level within a few dozen games, while one game never moves a rating by
more than 32 points.
"""

from __future__ import annotations

from collections.abc import Sequence

#: Every player's rating before their first game.
START_RATING = 1500.0
#: The most one game can move a rating (a win or loss against every other person).
K_FACTOR = 32.0
#: Rating difference at which the stronger player is expected to score 10:1.
SCALE = 400.0


def expected(rating: float, opponent: float) -> float:
    """The share of a match a player is expected to score against one opponent (0..1)."""
    return 1.0 / (1.0 + 10.0 ** ((opponent - rating) / SCALE))


def pair_outcome(score: float, opponent_score: float) -> float:
    """1 for the higher final total, 0 for the lower, 1/2 for a tie."""
    if score == opponent_score:
        return 0.5
    return 1.0 if score > opponent_score else 0.0


def rating_changes(ratings: Sequence[float], scores: Sequence[float],
                   k: float = K_FACTOR) -> list[float]:
    """The change of each person's rating after one game, in the order given.

    ``ratings`` and ``scores`` hold one entry per person of the game (bots and
    the Willi card monster left out). Fewer than two people: nothing changes.
    """
    if len(ratings) != len(scores):
        raise ValueError(f"{len(ratings)} ratings for {len(scores)} scores")
    people = len(ratings)
    if people < 2:
        return [0.0] * people
    weight = k / (people - 1)
    return [weight * sum(pair_outcome(scores[me], scores[other]) - expected(ratings[me], ratings[other])
                         for other in range(people) if other != me)
            for me in range(people)]

"""Weng-Lin ratings: openskill's Plackett-Luce model, one (mu, sigma) per player and game.

Why openskill: our games seat 2 to 6 people and end in a ranking with ties,
which Plackett-Luce rates as one event (no round robin of pairwise matches),
and sigma says how sure we are, so a new player moves fast and a regular slowly.

A finished game is a ranking of its people by final total: higher totals
place better, equal totals share a placement (a tie). Bots and seats no person
holds are left out (see ``FinishedGame.people``); with fewer than two people
left there is nothing to compare, and no rating changes. Two people are rated
by the same model (for two, Plackett-Luce is a plain pairwise comparison), so
the ratings of one game stay comparable whatever the table size.

The number leaderboards show and sort by, and tournaments seed by, is the
conservative rating ``mu - 3 * sigma``: the skill the player has with about
99.9 % certainty. A new player starts at the model's defaults, mu = 25 and
sigma = 25/3, so at a conservative rating of 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from openskill.models import PlackettLuce

#: The model with openskill's defaults (mu 25, sigma 25/3, beta 25/6, tau 25/300).
MODEL = PlackettLuce()
#: Standard deviations below mu of the conservative rating.
CONSERVATIVE_SIGMAS = 3.0


@dataclass(frozen=True)
class Rating:
    """One player's skill estimate in one game: the mean and its uncertainty."""

    mu: float = MODEL.mu
    sigma: float = MODEL.sigma

    def conservative(self) -> float:
        """``mu - 3 sigma``: what leaderboards show and seeding uses."""
        return self.mu - CONSERVATIVE_SIGMAS * self.sigma


def placements(scores: Sequence[float]) -> list[int]:
    """Placement per person, 1 for the best total; equal totals share one ("1224" ranking)."""
    return [1 + sum(other > mine for other in scores) for mine in scores]


def rate(ratings: Sequence[Rating], scores: Sequence[float]) -> list[Rating]:
    """Every person's rating after one game, in the order given. ``ratings`` and ``scores`` hold one
    entry per person, in any order (the result does not depend on it); fewer than two: unchanged."""
    if len(ratings) != len(scores):
        raise ValueError(f"{len(ratings)} ratings for {len(scores)} scores")
    if len(ratings) < 2:
        return list(ratings)
    teams = [[MODEL.rating(mu=r.mu, sigma=r.sigma)] for r in ratings]
    rated = MODEL.rate(teams, ranks=[float(p) for p in placements(scores)])
    return [Rating(team[0].mu, team[0].sigma) for team in rated]

"""Bots choose among the legal actions of a seat's own view, never the full state.

Because a bot sees exactly what a player sees (``view(seat)``, whose ``legal``
key lists the seat's legal actions), the same bot can sit in for a player who
left, fill a table through the real API, or drive load tests.
"""

from __future__ import annotations

import random
from typing import Protocol

from shared.games.base import Action, View


class Bot(Protocol):
    """Anything that picks one of ``view["legal"]``."""

    def choose(self, view: View, rng: random.Random) -> Action:
        """Pick an action; only called when ``view["legal"]`` is not empty."""
        ...


class RandomBot:
    """Uniformly random among the legal actions: the baseline every bot must beat."""

    def choose(self, view: View, rng: random.Random) -> Action:
        """Any legal action, uniformly."""
        legal: list[Action] = view["legal"]
        return dict(rng.choice(legal))

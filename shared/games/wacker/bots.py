"""Bots for Willi Wacker: the uniform random baseline and a simple heuristic."""

from __future__ import annotations

import random

from shared.games.base import Action, View
from shared.games.bots import RandomBot
from shared.games.wacker.strategy import choose


class HeuristicBot:
    """Plays the best-scoring legal action of :mod:`shared.games.wacker.strategy`."""

    def choose(self, view: View, rng: random.Random) -> Action:
        """The strategy's pick; deterministic, so ``rng`` is unused."""
        return choose(view)


BOTS: dict[str, type] = {"random": RandomBot, "heuristic": HeuristicBot}

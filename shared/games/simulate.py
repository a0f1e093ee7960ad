"""Play whole games with bots, in process: for property tests, benchmarks, win rates."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from shared.games.base import Game, derived_rng
from shared.games.bots import Bot


def play_game(cls: type[Game], bots: Sequence[Bot], seed: int,
              options: Mapping[str, Any] | None = None, max_steps: int = 200_000) -> Game:
    """Let ``bots[seat]`` act for every seat until the game is over; return the game."""
    return run_game(cls, bots, seed, options, max_steps)[0]


def run_game(cls: type[Game], bots: Sequence[Bot], seed: int,
             options: Mapping[str, Any] | None = None, max_steps: int = 200_000) -> tuple[Game, int]:
    """Play a whole game; return it and the number of actions applied.

    Seats act in the order :meth:`Game.to_act` lists them (the first listed seat
    acts first); in a simultaneous game a seeded random waiting seat acts next.
    """
    game = cls.new(len(bots), options or {}, seed)
    rng = derived_rng(seed, "bots")
    for step in range(max_steps):
        if game.over:
            return game, step
        waiting = game.to_act()
        if not waiting:
            raise RuntimeError(f"{cls.name}: nobody can act but the game is not over")
        seat = waiting[0] if not cls.simultaneous else rng.choice(waiting)
        game.apply(seat, bots[seat].choose(game.view(seat), rng))
    raise RuntimeError(f"{cls.name}: game did not end within {max_steps} actions")

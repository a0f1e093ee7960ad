"""Full random games per second of each pure rules engine."""

from __future__ import annotations

import time

from shared.games.bots import RandomBot
from shared.games.catalog import CATALOGUE
from shared.games.registry import engine_class
from shared.games.simulate import run_game

#: Seats used for each game's figure: four, or fewer where a game seats fewer.
SEATS = {name: min(4, game.max_seats) for name, game in CATALOGUE.items()}


def games_per_second(name: str, budget_seconds: float) -> tuple[int, float, float]:
    """(games played, games/s, actions/s) of random play within the time budget."""
    cls = engine_class(name)
    bots = [RandomBot() for _ in range(SEATS[name])]
    started = time.perf_counter()
    games = actions = 0
    while time.perf_counter() - started < budget_seconds or games == 0:
        actions += run_game(cls, bots, seed=games)[1]
        games += 1
    elapsed = time.perf_counter() - started
    return games, games / elapsed, actions / elapsed


def report(budget_seconds: float = 3.0) -> list[str]:
    """One line per game."""
    lines = ["Rules engines: full random games (pure Python, one core)"]
    for name in CATALOGUE:
        games, rate, action_rate = games_per_second(name, budget_seconds)
        lines.append(f"  {name:<14} {SEATS[name]} seats  {rate:9.1f} games/s  "
                     f"{action_rate:10.0f} actions/s  ({games} games)")
    return lines

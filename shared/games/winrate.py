"""`stammtisch winrate`: how often one bot level wins against another, over seeded games.

One seat (rotating with the seed) is played by the candidate, every other
seat by the opponent level; a shared win counts as a win. The baseline is
what a seat would win if all bots were equal: 1 / seats.
"""

from __future__ import annotations

from shared.games.registry import bot_levels, engine_class
from shared.games.simulate import play_game


def win_rate(game: str, seats: int, games: int, candidate: str = "heuristic",
             opponent: str = "random") -> float:
    """The candidate's share of games won (ties shared count as wins)."""
    cls = engine_class(game)
    levels = bot_levels(game)
    wins = 0
    for seed in range(games):
        seat = seed % seats
        bots = [levels[candidate]() if i == seat else levels[opponent]() for i in range(seats)]
        wins += seat in play_game(cls, bots, seed).winners()
    return wins / games


def main(game: str, seats: int, games: int, candidate: str, opponent: str) -> int:
    """Print the rate next to the equal-strength baseline."""
    rate = win_rate(game, seats, games, candidate, opponent)
    print(f"{game}, {seats} seats, {games} games: {candidate} won {rate:.1%} against {opponent} "
          f"(equal strength would win {1 / seats:.1%})")
    return 0

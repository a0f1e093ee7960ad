"""Willi bots: registry, legality from the view alone, and the heuristic's edge over random."""

from __future__ import annotations

import pytest

from shared.games.bots import RandomBot
from shared.games.simulate import play_game
from shared.games.willi.bots import BOTS, HeuristicBot
from shared.games.willi.engine import Willi


def test_bots_are_registered_by_name() -> None:
    assert BOTS["random"] is RandomBot and BOTS["heuristic"] is HeuristicBot


@pytest.mark.parametrize("people", [3, 4])
def test_heuristic_bots_finish_games_among_themselves(people: int) -> None:
    for seed in range(5):
        game = play_game(Willi, [HeuristicBot() for _ in range(people)], seed)
        assert game.over and game.winners()


@pytest.mark.slow
@pytest.mark.parametrize("people", [3, 4])
def test_heuristic_beats_random_clearly(people: int) -> None:
    """One heuristic seat (rotating) among random ones wins far above the 1/n baseline."""
    games, wins = 40, 0
    for seed in range(games):
        hero = seed % people
        bots = [RandomBot() for _ in range(people)]
        bots[hero] = HeuristicBot()
        wins += hero in play_game(Willi, bots, seed).winners()
    assert wins / games >= 2 / people

"""Willi Stich bots: only legal choices, from the view alone; the heuristic beats random."""

from __future__ import annotations

import random

import pytest

from shared.games.bots import RandomBot
from shared.games.simulate import play_game
from shared.games.stich.bots import BOTS, HeuristicBot
from shared.games.stich.engine import WilliStich
from tests.support.stich import call_in_turn, dealt


def test_bots_are_registered() -> None:
    assert BOTS["random"] is RandomBot and BOTS["heuristic"] is HeuristicBot
    assert len(BOTS) == 2


def test_heuristic_chooses_only_legal_actions_from_the_view() -> None:
    rng = random.Random(1)
    for seed in range(6):
        game = WilliStich.new(3 + seed % 4, {"start_round": 1 + 3 * seed}, seed)
        while not game.over:
            seat = game.to_act()[0]
            view = game.view(seat)
            action = HeuristicBot().choose(view, rng)
            assert action in view["legal"]
            game.apply(seat, action)


def test_heuristic_takes_the_trick_it_needs_as_cheaply_as_it_can() -> None:
    game = dealt([["HA", "HK"], ["H7", "S7"], ["H8", "S8"]], round_no=2)
    call_in_turn(game, {1: 0, 2: 0, 0: 1})
    game.apply(1, {"type": "play", "card": "H7"})
    game.apply(2, {"type": "play", "card": "H8"})
    assert HeuristicBot().choose(game.view(0), random.Random(0)) == {"type": "play", "card": "HK"}


def test_heuristic_ducks_once_its_call_is_made() -> None:
    game = dealt([["H7", "HA"], ["H8", "S7"], ["S8", "D9"]], round_no=2)
    call_in_turn(game, {1: 1, 2: 0, 0: 0})
    game.apply(1, {"type": "play", "card": "H8"})
    game.apply(2, {"type": "play", "card": "S8"})
    assert HeuristicBot().choose(game.view(0), random.Random(0)) == {"type": "play", "card": "H7"}


def test_heuristic_reads_the_foreheads() -> None:
    hopeless = dealt([["S7"], ["HA"], ["C10"]], turned="H9", round_no=19, dealer=2)
    assert HeuristicBot().choose(hopeless.view(0), random.Random(0)) == {
        "type": "call", "tricks": 0}
    promising = dealt([["S7"], ["D7"], ["C7"]], turned="H9", round_no=19, dealer=2)
    assert HeuristicBot().choose(promising.view(0), random.Random(0)) == {
        "type": "call", "tricks": 1}


@pytest.mark.slow
def test_heuristic_beats_random_players() -> None:
    """One heuristic seat against random ones; the random baseline is 1/seats."""
    wins = games = 0
    for seed in range(40):
        seats = 3 + seed % 4
        bots = [HeuristicBot() if seat == 0 else RandomBot() for seat in range(seats)]
        game = play_game(WilliStich, bots, seed, {"first_dealer": seed % seats})
        wins += 0 in game.winners()
        games += 1
    assert wins / games > 0.75


def test_random_bot_plays_whole_games() -> None:
    game = play_game(WilliStich, [RandomBot()] * 5, 7)
    assert game.over and len(game.summary()["completed_rounds"]) == 19

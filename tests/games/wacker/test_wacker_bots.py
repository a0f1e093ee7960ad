"""Willi Wacker bots: both choose legal actions from the seat's view; the heuristic wins more."""

from __future__ import annotations

from shared.games.base import derived_rng
from shared.games.bots import RandomBot
from shared.games.simulate import play_game
from shared.games.wacker.bots import BOTS, HeuristicBot
from shared.games.wacker.engine import WilliWacker


def test_the_registry_names_a_random_and_a_heuristic_bot() -> None:
    assert BOTS["random"] is RandomBot and BOTS["heuristic"] is HeuristicBot


def test_bots_choose_legal_actions_from_the_view_alone() -> None:
    game = WilliWacker.new(4, {"target": 30}, 8)
    rng = derived_rng(8, "test")
    bots = [HeuristicBot(), RandomBot(), HeuristicBot(), RandomBot()]
    while not game.over:
        seat = game.to_act()[0]
        view = game.view(seat)
        action = bots[seat].choose(view, rng)
        assert action in view["legal"]
        game.apply(seat, action)


def test_the_heuristic_beats_random_players() -> None:
    games, wins = 40, 0
    for seed in range(games):
        seats = 3 + seed % 4
        bots = [HeuristicBot() if seat == seed % seats else RandomBot() for seat in range(seats)]
        wins += seed % seats in play_game(WilliWacker, bots, seed, {"target": 60}).winners()
    assert wins / games > 0.6  # random baseline: 1/3 .. 1/6


def test_games_played_by_the_turn_clock_alone_end() -> None:
    for seed in range(6):
        game = WilliWacker.new(3 + seed % 4, {}, seed)
        while not game.over:
            seat = game.to_act()[0]
            action = game.default_action(seat)
            assert action is not None and action in game.legal_actions(seat)
            game.apply(seat, action)
        assert game.winners()

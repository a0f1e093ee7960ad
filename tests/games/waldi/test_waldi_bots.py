"""Wie Waldi bots: legal from their view, games end, races show up, heuristic beats random."""

from __future__ import annotations

import random

import pytest

from shared.games.bots import RandomBot
from shared.games.errors import ErrorCode, RuleError
from shared.games.simulate import play_game
from shared.games.waldi.bots import BOTS, HeuristicBot
from shared.games.waldi.cards import card_sets
from shared.games.waldi.engine import WieWaldi


def test_bot_table() -> None:
    assert BOTS["random"] is RandomBot and BOTS["heuristic"] is HeuristicBot


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_random_games_end(seats: int) -> None:
    for seed in range(3):
        game = play_game(WieWaldi, [RandomBot()] * seats, seed)
        assert game.over and game.winners()


@pytest.mark.parametrize("seats", [2, 4])
def test_heuristic_moves_are_legal_and_name_the_length_seen(seats: int) -> None:
    bot, rng = HeuristicBot(), random.Random(seats)
    game = WieWaldi.new(seats, seed=seats)
    while not game.over:
        seat = rng.choice(game.to_act())
        view = game.view(seat)
        action = bot.choose(view, rng)
        plain = {k: v for k, v in action.items() if k != "at"}
        assert plain in view["legal"]
        if action["type"] == "attach":
            dog = next(d for d in view["dogs"] if d["id"] == action["dog"])
            assert action["at"] == len(dog["cards"])
        game.apply(seat, action)


def on_top(seat: int, *cards: str) -> list[list[str]]:
    """The seat's set as three piles with these cards on top of pile 0."""
    rest = list(card_sets().sets[seat])
    for card in cards:
        rest.remove(card)
    order = [*cards, *rest]
    return [order[0:10], order[10:20], order[20:30]]


def test_a_race_between_heuristic_bots_comes_back_stale() -> None:
    setup = {"rounds": [{"piles": [on_top(0, "Hr", "Mrg"), on_top(1, "Mrb")]}]}
    game = WieWaldi.new(2, seed=1, setup=setup)
    for seat, action in [(0, "draw"), (0, "place_head"), (0, "draw"), (1, "draw")]:
        game.apply(seat, {"type": action, "pile": 0} if action == "draw" else {"type": action})
    bot, rng = HeuristicBot(), random.Random(0)
    first, second = bot.choose(game.view(1), rng), bot.choose(game.view(0), rng)
    game.apply(1, first)
    with pytest.raises(RuleError) as info:
        game.apply(0, second)
    assert info.value.code is ErrorCode.STALE


@pytest.mark.slow
def test_the_heuristic_bot_clearly_beats_random() -> None:
    games, wins = 60, 0
    for seed in range(games):
        seat = seed % 4
        bots = [HeuristicBot() if s == seat else RandomBot() for s in range(4)]
        wins += seat in play_game(WieWaldi, bots, seed).winners()
    assert wins / games > 0.5  # the random baseline is 0.25

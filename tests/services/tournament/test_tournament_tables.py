"""The dealer of each game of a tournament round."""

from __future__ import annotations

from services.tournament.tables import dealer_option


def test_the_first_deal_moves_on_each_game_of_a_round() -> None:
    assert [dealer_option("willi-wacker", game, 3) for game in (1, 2, 3, 4)] == [
        {"first_dealer": 0}, {"first_dealer": 1}, {"first_dealer": 2}, {"first_dealer": 0}]


def test_games_that_pass_the_deal_on_themselves_are_left_alone() -> None:
    assert dealer_option("willi-stich", 2, 4) == {}  # the table carries next_dealer over
    assert dealer_option("willi", 2, 4) == {}  # no first_dealer option

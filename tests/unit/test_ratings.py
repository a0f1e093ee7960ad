"""Multiplayer Elo: worked examples and properties over random games."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from services.scoring.ratings import K_FACTOR, START_RATING, expected, pair_outcome, rating_changes

ratings_st = st.floats(min_value=100.0, max_value=3000.0, allow_nan=False)
scores_st = st.integers(min_value=-50, max_value=200)


@st.composite
def games(draw: st.DrawFn, min_people: int = 2) -> tuple[list[float], list[int]]:
    """Ratings and final scores of the people of one game (2 to 6 people)."""
    people = draw(st.integers(min_value=min_people, max_value=6))
    return (draw(st.lists(ratings_st, min_size=people, max_size=people)),
            draw(st.lists(scores_st, min_size=people, max_size=people)))


def test_equal_players_split_k_between_winner_and_loser() -> None:
    assert rating_changes([START_RATING, START_RATING], [10, 3]) == [K_FACTOR / 2, -K_FACTOR / 2]


def test_a_draw_between_equals_changes_nothing() -> None:
    assert rating_changes([1500.0, 1500.0, 1500.0], [7, 7, 7]) == [0.0, 0.0, 0.0]


def test_beating_everyone_at_a_table_of_equals() -> None:
    """Three pairwise wins, each worth K/2, weighted by 1/(n-1) = 1/3."""
    changes = rating_changes([1500.0] * 4, [40, 30, 20, 10])
    assert changes == pytest.approx([16.0, 16 / 3, -16 / 3, -16.0])


def test_an_upset_moves_more_than_an_expected_win() -> None:
    favourite_wins = rating_changes([1800.0, 1400.0], [5, 1])[0]
    underdog_wins = rating_changes([1800.0, 1400.0], [1, 5])[1]
    assert 0 < favourite_wins < underdog_wins < K_FACTOR


def test_expected_share_is_the_logistic_curve() -> None:
    assert expected(1500, 1500) == 0.5
    assert expected(1900, 1500) == pytest.approx(10 / 11)


def test_pair_outcome() -> None:
    assert (pair_outcome(3, 1), pair_outcome(1, 3), pair_outcome(2, 2)) == (1.0, 0.0, 0.5)


@pytest.mark.parametrize("people", [0, 1])
def test_fewer_than_two_people_change_nothing(people: int) -> None:
    assert rating_changes([1600.0] * people, [5] * people) == [0.0] * people


def test_mismatched_inputs_are_refused() -> None:
    with pytest.raises(ValueError, match="2 ratings for 3 scores"):
        rating_changes([1500.0, 1500.0], [1, 2, 3])


@given(games())
def test_rating_sum_is_conserved(game: tuple[list[float], list[int]]) -> None:
    ratings, scores = game
    assert math.fsum(rating_changes(ratings, scores)) == pytest.approx(0.0, abs=1e-9)


@given(games())
def test_no_game_moves_a_rating_by_more_than_k(game: tuple[list[float], list[int]]) -> None:
    assert all(abs(change) < K_FACTOR for change in rating_changes(*game))


@given(ratings_st, ratings_st, scores_st, scores_st)
def test_a_winner_never_loses_rating_against_a_loser(a: float, b: float, score_a: int,
                                                     score_b: int) -> None:
    change_a, change_b = rating_changes([a, b], [score_a, score_b])
    if score_a > score_b:
        assert change_a > 0 > change_b
    elif score_a < score_b:
        assert change_a < 0 < change_b


@given(games())
def test_the_sole_top_scorer_gains_and_the_sole_bottom_scorer_loses(
        game: tuple[list[float], list[int]]) -> None:
    ratings, scores = game
    changes = rating_changes(ratings, scores)
    best, worst = max(scores), min(scores)
    if scores.count(best) == 1 and best != worst:
        assert changes[scores.index(best)] > 0
    if scores.count(worst) == 1 and best != worst:
        assert changes[scores.index(worst)] < 0


@given(games(), st.randoms(use_true_random=False))
def test_seat_order_does_not_matter(game: tuple[list[float], list[int]], rng: random.Random) -> None:
    ratings, scores = game
    order = list(range(len(ratings)))
    rng.shuffle(order)
    shuffled = rating_changes([ratings[i] for i in order], [scores[i] for i in order])
    assert shuffled == pytest.approx([rating_changes(ratings, scores)[i] for i in order])


@given(ratings_st, ratings_st, scores_st, scores_st)
def test_two_players_swap_symmetrically(a: float, b: float, score_a: int, score_b: int) -> None:
    """Swapping who is who swaps the changes; the two changes are equal and opposite."""
    change_a, change_b = rating_changes([a, b], [score_a, score_b])
    assert rating_changes([b, a], [score_b, score_a]) == pytest.approx([change_b, change_a])
    assert change_a == pytest.approx(-change_b)


@given(games(), st.integers(min_value=-3000, max_value=3000))
def test_only_rating_differences_matter(game: tuple[list[float], list[int]], shift: int) -> None:
    ratings, scores = game
    shifted = rating_changes([r + shift for r in ratings], scores)
    assert shifted == pytest.approx(rating_changes(ratings, scores), abs=1e-9)

"""Weng-Lin ratings: our rate() against openskill itself, ties, 2 to 6 people, input order."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st
from openskill.models import PlackettLuce

from services.scoring.ratings import Rating, placements, rate
from services.scoring.store import Standing

ratings_st = st.builds(Rating, st.floats(min_value=0.0, max_value=50.0),
                       st.floats(min_value=0.5, max_value=25 / 3))
#: Few distinct totals, so that ties are common.
scores_st = st.sampled_from([-10, 0, 10, 20, 30])


@st.composite
def games(draw: st.DrawFn, min_people: int = 2) -> tuple[list[Rating], list[int]]:
    """Ratings and final totals of the people of one game (2 to 6 people)."""
    people = draw(st.integers(min_value=min_people, max_value=6))
    return (draw(st.lists(ratings_st, min_size=people, max_size=people)),
            draw(st.lists(scores_st, min_size=people, max_size=people)))


def openskill_rate(ratings: list[Rating], scores: list[int]) -> list[float]:
    """mu, sigma, mu, sigma, ... as a fresh openskill model rates the game from its scores."""
    model = PlackettLuce()
    rated = model.rate([[model.rating(mu=r.mu, sigma=r.sigma)] for r in ratings], scores=scores)
    return [value for team in rated for value in (team[0].mu, team[0].sigma)]


def flat(ratings: list[Rating]) -> list[float]:
    """mu, sigma, mu, sigma, ... (comparable with pytest.approx)."""
    return [value for r in ratings for value in (r.mu, r.sigma)]


def test_a_new_player_has_the_model_default_and_a_conservative_rating_of_zero() -> None:
    model = PlackettLuce()
    assert (Rating().mu, Rating().sigma) == (model.mu, model.sigma) == (25.0, 25 / 3)
    assert Rating().conservative() == pytest.approx(0.0)
    assert Rating(30.0, 2.0).conservative() == pytest.approx(24.0)
    assert Rating(30.0, 2.0).conservative() == pytest.approx(model.rating(mu=30.0, sigma=2.0).ordinal())


def test_placements_share_a_place_on_equal_totals() -> None:
    assert placements([10, 30, 30, 5]) == [3, 1, 1, 4]
    assert placements([7, 7, 7]) == [1, 1, 1]


@pytest.mark.parametrize("people", [3, 4, 5, 6])
def test_a_game_of_newcomers_is_rated_as_openskill_rates_it(people: int) -> None:
    scores = [10 * seat for seat in range(people)]
    after = rate([Rating()] * people, scores)
    assert flat(after) == pytest.approx(openskill_rate([Rating()] * people, scores))
    mus = [r.mu for r in after]
    assert mus == sorted(mus), "a higher total never ends below a lower one"
    assert mus[-1] > 25.0 > mus[0]
    assert all(r.sigma < 25 / 3 for r in after), "every game makes the model surer"


@given(games())
def test_rate_is_openskill_plackett_luce_with_ties(game: tuple[list[Rating], list[int]]) -> None:
    ratings, scores = game
    assert flat(rate(ratings, scores)) == pytest.approx(openskill_rate(ratings, scores))


def test_a_tie_among_equals_moves_no_mu() -> None:
    after = rate([Rating()] * 3, [7, 7, 7])
    assert [r.mu for r in after] == pytest.approx([25.0] * 3)
    assert all(r.sigma < 25 / 3 for r in after)


def test_tied_people_of_equal_rating_end_equal() -> None:
    first, second, third, last = rate([Rating()] * 4, [30, 20, 20, 0])
    assert (second.mu, second.sigma) == pytest.approx((third.mu, third.sigma))
    assert first.mu > second.mu > last.mu


def test_an_upset_moves_more_than_an_expected_win() -> None:
    strong, weak = Rating(35.0, 3.0), Rating(15.0, 3.0)
    favourite_gain = rate([strong, weak, Rating()], [9, 1, 5])[0].mu - strong.mu
    underdog_gain = rate([strong, weak, Rating()], [1, 9, 5])[1].mu - weak.mu
    assert 0 < favourite_gain < underdog_gain


@pytest.mark.parametrize("people", [0, 1])
def test_fewer_than_two_people_change_nothing(people: int) -> None:
    assert rate([Rating(30.0, 4.0)] * people, [5] * people) == [Rating(30.0, 4.0)] * people


def test_mismatched_inputs_are_refused() -> None:
    with pytest.raises(ValueError, match="2 ratings for 3 scores"):
        rate([Rating(), Rating()], [1, 2, 3])


@given(games(min_people=3), st.randoms(use_true_random=False))
def test_seat_order_does_not_matter(game: tuple[list[Rating], list[int]], rng: random.Random) -> None:
    ratings, scores = game
    order = list(range(len(ratings)))
    rng.shuffle(order)
    shuffled = rate([ratings[i] for i in order], [scores[i] for i in order])
    assert flat(shuffled) == pytest.approx(flat([rate(ratings, scores)[i] for i in order]))


@given(games())
def test_the_sole_top_scorer_gains_and_the_sole_bottom_scorer_loses(
        game: tuple[list[Rating], list[int]]) -> None:
    ratings, scores = game
    after = rate(ratings, scores)
    best, worst = max(scores), min(scores)
    if scores.count(best) == 1 and best != worst:
        assert after[scores.index(best)].mu > ratings[scores.index(best)].mu
    if scores.count(worst) == 1 and best != worst:
        assert after[scores.index(worst)].mu < ratings[scores.index(worst)].mu


@given(st.lists(st.tuples(ratings_st, st.integers(min_value=0, max_value=10_000)), min_size=2, max_size=20))
def test_the_board_key_sorts_by_conservative_rating_then_wins(entries: list[tuple[Rating, int]]) -> None:
    """Also below zero, where new players' first losses put them."""
    standings = [Standing(f"p{n}", wins, wins, rating) for n, (rating, wins) in enumerate(entries)]
    by_key = sorted(standings, key=Standing.rank_key)
    by_meaning = sorted(standings, key=lambda s: (round(s.rating.conservative() * 1000), s.wins))
    assert [s.rank_key() for s in by_key] == [s.rank_key() for s in by_meaning]

"""Willi: properties over thousands of seeded random games with 3 and 4 people."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shared.games.errors import ErrorCode, RuleError
from shared.games.willi.cards import full_deck
from shared.games.willi.engine import Willi
from tests.support.willi import EventScorer, cards_shown, finish_randomly, random_step

DECK = sorted(full_deck())
KINDS = ("discard", "play", "meinz", "pass", "exchange")
PHASE_KINDS = {"discard": {"discard"}, "play": {"play"}, "call": {"meinz", "pass"},
               "exchange": {"exchange", "pass"}, "over": set()}


def cards_in_play(game: Willi) -> list[str]:
    """Every card of the round wherever it is: hands, discards, table, piles."""
    state = game.state
    cards = [card for hand in state.hands for card in hand]
    cards += [card for card in state.discards if card is not None]
    cards += [card for trick in state.finished for card in trick.pile()]
    if state.phase != "exchange":  # during the exchange the table trick is already a pile
        cards += [card for _, card in state.trick]
    return sorted(cards)


def expected_refusal(game: Willi, seat: int, action: dict[str, Any]) -> ErrorCode:
    """The code of the first rule a well-formed, illegal action breaks (precedence order)."""
    state, kind = game.state, action["type"]
    if game.over:
        return ErrorCode.GAME_OVER
    if kind not in PHASE_KINDS[state.phase]:
        return ErrorCode.WRONG_PHASE
    if seat not in game.to_act():
        return ErrorCode.NOT_YOUR_TURN
    hand, table = state.hands[seat], [card for _, card in state.trick]
    if kind == "exchange" and (action["give"] not in hand or action["take"] not in table):
        return ErrorCode.CARD_NOT_IN_HAND
    if kind in ("discard", "play") and action["card"] not in hand:
        return ErrorCode.CARD_NOT_IN_HAND
    return ErrorCode.MUST_FOLLOW if kind == "play" else ErrorCode.NOT_ALLOWED


def some_action(rng: random.Random, game: Willi) -> dict[str, Any]:
    """Any well-formed action, biased towards cards that matter now."""
    kind = rng.choice(KINDS)
    table = [card for _, card in game.state.trick] or DECK
    if kind in ("discard", "play"):
        return {"type": kind, "card": rng.choice(DECK)}
    if kind == "exchange":
        return {"type": kind, "give": rng.choice(DECK), "take": rng.choice(table)}
    return {"type": kind}


GAMES_PER_TABLE_SIZE = 600


@pytest.mark.slow
@pytest.mark.parametrize("people", [3, 4])
def test_random_games_keep_cards_tricks_and_scores(people: int) -> None:
    """Every legal action is accepted; 36 cards always; 2 tricks each; scores from events."""
    for seed in range(GAMES_PER_TABLE_SIZE):
        game = Willi.new(people, {}, seed)
        rng = random.Random(seed)
        scorer = EventScorer(people)
        while not game.over:
            events = random_step(game, rng)[2]
            scorer.feed(events)
            if any(event["type"] in ("trick_won", "round_started") for event in events):
                assert cards_in_play(game) == DECK
        assert scorer.rounds == 8
        for done in game.state.completed_rounds:
            assert sorted(done["trick_winners"]) == [0, 0, 1, 1, 2, 2, 3, 3]
        assert game.winners() and all(seat < people for seat in game.winners())


@pytest.mark.slow
@pytest.mark.parametrize("people", [3, 4])
def test_actions_outside_the_legal_list_are_refused_with_the_right_code(people: int) -> None:
    for seed in range(20):
        game = Willi.new(people, {}, seed)
        rng = random.Random(seed)
        while not game.over:
            before = game.to_dict()
            for _ in range(3):
                seat = rng.randrange(people)
                action = some_action(rng, game)
                if action in game.legal_actions(seat):
                    continue
                with pytest.raises(RuleError) as caught:
                    game.apply(seat, action)
                assert caught.value.code == expected_refusal(game, seat, action), action
                assert game.to_dict() == before
            assert cards_in_play(game) == DECK
            random_step(game, rng)


@pytest.mark.parametrize("people", [3, 4])
def test_every_listed_action_is_accepted(people: int) -> None:
    for seed in range(8):
        game = Willi.new(people, {}, seed)
        rng = random.Random(seed)
        while not game.over:
            for seat in range(people):
                for action in game.legal_actions(seat):
                    Willi.from_dict(game.to_dict()).apply(seat, action)
            random_step(game, rng)


def hidden_from(game: Willi, viewer: int | None) -> set[str]:
    """Cards ``viewer`` must not see: others' hands (except publicly swapped ones), discards."""
    state = game.state
    swapped = {trick.exchange[1] for trick in state.finished if trick.exchange}
    others = {card for owner, hand in enumerate(state.hands) if owner != viewer for card in hand}
    return (others - swapped) | {card for card in state.discards if card is not None}


@pytest.mark.slow
@pytest.mark.parametrize("people", [3, 4])
def test_no_view_or_event_shows_another_seats_hand_or_a_discard(people: int) -> None:
    for seed in range(6):
        game = Willi.new(people, {}, seed)
        rng = random.Random(seed)
        while not game.over:
            for viewer in [None, *range(people)]:
                view = game.view(viewer)
                assert not cards_shown(view) & hidden_from(game, viewer)
                if viewer is not None:
                    assert view["hands"][viewer] == game.state.hands[viewer]
                    assert view["legal"] == game.legal_actions(viewer)
            stack = list(game.state.hands[3])
            seat, action, events = random_step(game, rng)
            assert_events_reveal_only_played_and_swapped_cards(events, seat, action, stack)


def assert_events_reveal_only_played_and_swapped_cards(
        events: list[dict[str, Any]], seat: int, action: dict[str, Any], stack: list[str]) -> None:
    """Cards appear only as the card just played (the monster's: its stack top) or a swap."""
    monster_cards = []
    for event in events:
        if event["type"] == "played" and event["seat"] == seat:
            assert event["card"] == action["card"]
        elif event["type"] == "played":
            monster_cards.append(event["card"])
        elif event["type"] != "exchanged":
            assert not cards_shown(event), event
    assert monster_cards == stack[:len(monster_cards)]


@pytest.mark.slow
@settings(max_examples=80, derandomize=True, deadline=None)
@given(people=st.sampled_from([3, 4]), seed=st.integers(0, 2**31), steps=st.integers(0, 500))
def test_state_round_trips_through_json_mid_game(people: int, seed: int, steps: int) -> None:
    game = Willi.new(people, {}, seed)
    rng = random.Random(seed)
    for _ in range(steps):
        if game.over:
            break
        random_step(game, rng)
    stored = json.loads(json.dumps(game.to_dict()))
    restored = Willi.from_dict(stored)
    assert restored.to_dict() == game.to_dict() == stored
    assert restored.summary() == game.summary()
    rng_state = rng.getstate()
    events = finish_randomly(game, rng)
    rng.setstate(rng_state)
    assert finish_randomly(restored, rng) == events  # the restored game plays on identically
    assert restored.to_dict() == game.to_dict()

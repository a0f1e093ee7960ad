"""Willi Wacker properties over thousands of seeded random games with 3 to 6 seats.

Cheap checks run on many games (every game ends, cards are conserved, every
turn shrinks hands plus talon, events name no hidden card); the expensive ones
(refusals change nothing, every legal action is accepted, storage round-trips,
views leak nothing) run on fewer games but at every step.
"""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shared.games.base import Action
from shared.games.errors import ErrorCode, RuleError
from shared.games.wacker.cards import DECK_COUNTS, PRUEGEL, ZAPFENSTREICH, is_beer, is_card
from shared.games.wacker.engine import WilliWacker
from shared.games.wacker.trays import (
    beer_counts,
    extends,
    extension_options,
    forms_group,
    lay_options,
)
from tests.support.wacker import all_cards

CHEAP_GAMES = 1000
HEAVY_GAMES = 30
MAX_STEPS = 20_000


def normal(action: Action) -> str:
    """An action as comparable text (card order does not matter)."""
    fields = dict(action)
    if "cards" in fields:
        fields["cards"] = sorted(fields["cards"])
    return json.dumps(fields, sort_keys=True)


def new_game(index: int, salt: str) -> tuple[WilliWacker, random.Random]:
    seats = 3 + index % 4
    rng = random.Random(f"{salt}:{index}")
    options = {"target": rng.choice([10, 20, 40]), "first_dealer": rng.randrange(seats)}
    return WilliWacker.new(seats, options, seed=rng.randrange(10**6)), rng


def steps(game: WilliWacker, rng: random.Random) -> Iterator[tuple[int, Action]]:
    """Yield (seat, random legal action) until the game ends; the caller applies it."""
    for _ in range(MAX_STEPS):
        if game.over:
            return
        acting = game.to_act()
        assert len(acting) == 1
        legal = game.legal_actions(acting[0])
        assert legal, "the seat that owes a decision always has a legal action"
        yield acting[0], dict(rng.choice(legal))
    raise AssertionError("game did not end")


def cards_named(value: Any) -> set[str]:
    """Card notations anywhere in a JSON-like value."""
    if isinstance(value, str):
        return {value} if is_card(value) else set()
    if isinstance(value, dict):
        value = list(value.values())
    return set().union(*map(cards_named, value)) if isinstance(value, list) else set()


@pytest.mark.slow
def test_random_games_end_conserve_cards_and_every_turn_plays_a_card() -> None:
    rounds = 0
    for index in range(CHEAP_GAMES):
        game, rng = new_game(index, "cheap")
        stock = None  # cards in hands and talon when the current turn began
        for seat, action in steps(game, rng):
            round_no, turns = game.state.round, game.state.turns
            events = game.apply(seat, action)
            assert all_cards(game) == DECK_COUNTS
            assert cards_named(events) <= cards_named(action), (action, events)
            if game.state.round != round_no:
                stock = None
            elif game.state.turns != turns:
                left = sum(map(len, game.state.hands)) + len(game.state.talon)
                assert stock is None or left < stock
                stock = left
        assert game.winners() and max(game.summary()["scores"]) >= game.state.options["target"]
        rounds += game.summary()["round"]
    assert rounds > CHEAP_GAMES  # some games needed more than one round


def refusals(game: WilliWacker, seat: int, rng: random.Random) -> list[tuple[int, Action, str]]:
    """Actions that must be refused now, each with its code (the rules doc precedence)."""
    state = game.state
    hand = state.hands[seat]
    legal = game.legal_actions(seat)
    other = rng.choice([s for s in range(state.seats) if s != seat])
    wrong = {"turn": {"type": "pass"}, "respond": {"type": "lay", "cards": ["B1"]},
             "after_flora": {"type": "respond", "card": PRUEGEL}}[state.phase]
    found: list[tuple[int, Action, str]] = [
        (other, dict(rng.choice(legal)), "NOT_YOUR_TURN"),
        (seat, wrong, "WRONG_PHASE"),
        (other, wrong, "WRONG_PHASE"),
        (seat, {**rng.choice(legal), "extra": 1}, "INVALID_ACTION"),
        (seat, {"type": "lay", "cards": ["B0"]}, "INVALID_ACTION"),
        (state.seats, dict(rng.choice(legal)), "INVALID_ACTION"),
    ]
    missing = sorted(set(DECK_COUNTS) - set(hand))
    if state.phase == "turn":
        if missing:
            card = rng.choice(missing)
            found.append((seat, {"type": "lay", "cards": [card]} if is_beer(card)
                          else {"type": "action", "card": card}, "CARD_NOT_IN_HAND"))
        beers = [card for card in hand if is_beer(card)]
        pick = rng.sample(beers, min(len(beers), rng.choice([2, 3])))
        if len(pick) > 1 and not forms_group(pick):
            found.append((seat, {"type": "lay", "cards": pick}, "NO_MATCH"))
        theirs = [tray for tray in state.face_up() if tray.owner != seat]
        if theirs and beers:
            tray, card = rng.choice(theirs), rng.choice(beers)
            found.append((seat, {"type": "extend", "tray": tray.id, "cards": [card]},
                          "NOT_ALLOWED" if extends(tray.cards, [card]) else "NO_MATCH"))
            if "TRINK" in hand:
                found.append((seat, {"type": "action", "card": "TRINK", "tray": tray.id},
                              "NOT_ALLOWED"))
    if state.phase == "respond":
        if PRUEGEL not in hand:
            found.append((seat, {"type": "respond", "card": PRUEGEL}, "CARD_NOT_IN_HAND"))
        odd = [card for card in hand if card not in (PRUEGEL, ZAPFENSTREICH)]
        if odd:
            found.append((seat, {"type": "respond", "card": rng.choice(odd)}, "NOT_ALLOWED"))
        assert state.duel is not None
        if ZAPFENSTREICH in hand and state.duel.kind == "schnorrer":
            found.append((seat, {"type": "respond", "card": ZAPFENSTREICH}, "NOT_ALLOWED"))
    if state.phase == "after_flora":
        for tray in state.face_up():
            options = extension_options(tray.cards, beer_counts(hand))
            if tray.owner == seat and tray.id != state.stolen_tray and options:
                found.append((seat, {"type": "extend", "tray": tray.id, "cards": options[0]},
                              "NOT_ALLOWED"))
    return [entry for entry in found
            if entry[0] != seat or normal(entry[1]) not in set(map(normal, legal))]


def hidden_shuffled(game: WilliWacker, viewer: int | None, rng: random.Random) -> WilliWacker:
    """The same game with every card ``viewer`` cannot see dealt anew into the same places."""
    data = game.to_dict()
    places = [data["hands"][seat] for seat in range(game.seat_count) if seat != viewer]
    places.append(data["talon"])
    cards = [card for place in places for card in place]
    rng.shuffle(cards)
    for place in places:
        place[:], cards = cards[:len(place)], cards[len(place):]
    return WilliWacker.from_dict(data)


@pytest.mark.slow
def test_refusals_change_nothing_legal_actions_are_accepted_and_state_round_trips() -> None:
    for index in range(HEAVY_GAMES):
        game, rng = new_game(index, "heavy")
        for step, (seat, action) in enumerate(steps(game, rng)):
            before = game.to_dict()
            for who, wrong, code in refusals(game, seat, rng):
                try:
                    game.apply(who, wrong)
                except RuleError as err:
                    assert err.code.value == code, (wrong, err.message)
                else:
                    raise AssertionError(f"accepted {wrong} from seat {who}")
                assert game.to_dict() == before
            if step % 4 == 0:
                for legal in game.legal_actions(seat):
                    WilliWacker.from_dict(before).apply(seat, legal)
            if step % 3 == 0:
                viewer = rng.choice([*range(game.seat_count), None])
                assert hidden_shuffled(game, viewer, rng).view(viewer) == game.view(viewer)
            copy = WilliWacker.from_dict(json.loads(json.dumps(before)))
            assert copy.apply(seat, action) == game.apply(seat, action)
            assert copy.to_dict() == game.to_dict()
        for seat in range(game.seat_count):
            try:
                game.apply(seat, {"type": "pass"})
            except RuleError as err:
                assert err.code is ErrorCode.GAME_OVER
            else:
                raise AssertionError("an action was accepted after the game ended")


BEERS = st.lists(st.sampled_from([f"B{v}" for v in range(1, 9)]), min_size=0, max_size=7)


def sub_multisets(hand: list[str]) -> set[tuple[str, ...]]:
    return {tuple(sorted(cards)) for size in range(1, len(hand) + 1)
            for cards in itertools.combinations(hand, size)}


@settings(max_examples=200, derandomize=True, deadline=None)
@given(hand=BEERS)
def test_lay_options_are_exactly_the_sets_and_runs_in_hand(hand: list[str]) -> None:
    brute = {cards for cards in sub_multisets(hand) if _is_set_or_run(cards)}
    listed = [tuple(sorted(cards)) for cards in lay_options(beer_counts(hand))]
    assert len(listed) == len(set(listed)) and set(listed) == brute


@settings(max_examples=200, derandomize=True, deadline=None)
@given(tray=st.one_of(
    st.integers(1, 8).flatmap(lambda v: st.integers(1, 4).map(lambda k: [f"B{v}"] * k)),
    st.integers(1, 8).flatmap(lambda low: st.integers(low, 8).map(
        lambda high: [f"B{v}" for v in range(low, high + 1)]))), hand=BEERS)
def test_extension_options_are_exactly_the_extending_hand_subsets(tray: list[str],
                                                                   hand: list[str]) -> None:
    brute = {cards for cards in sub_multisets(hand) if _is_set_or_run((*tray, *cards))}
    listed = [tuple(sorted(cards)) for cards in extension_options(tray, beer_counts(hand))]
    assert len(listed) == len(set(listed)) and set(listed) == brute


def _is_set_or_run(cards: tuple[str, ...]) -> bool:
    """Independent definition: all one value, or distinct values with max - min = count - 1."""
    values = [int(card[1:]) for card in cards]
    return len(set(values)) == 1 or (len(set(values)) == len(values)
                                    and max(values) - min(values) == len(values) - 1)

"""The terminal client's screen, drawn from real views of real engines (pure: no server)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from shared.games.base import Event, Game
from shared.games.catalog import CATALOGUE
from shared.games.registry import engine_class, words_of
from shared.sdk.client import Update
from shared.sdk.phrases import PHRASES, Seats, event_line, ordered_choices
from shared.sdk.render import own_hand, render
from tests.support.schemas import load_schema

NAMES = ["Anna", "Bruno", "Carla", "Dieter", "Eva", "Fritz"]


def play_until(name: str, seats: int, seed: int, done: Any, limit: int = 5000) -> tuple[Game, list[Event]]:
    """Random play until ``done(game)``; returns the game and the last commit's events."""
    game = engine_class(name).new(seats, {}, seed)
    rng = random.Random(seed)
    events: list[Event] = []
    for _ in range(limit):
        if done(game):
            return game, events
        seat = game.to_act()[0]
        events = game.apply(seat, rng.choice(game.view(seat)["legal"]))
    raise AssertionError("the situation never came")


def screen(game: Game, events: list[Event], me: int) -> str:
    return render(Update("t1", 7, events, game.view(me), me), Seats(NAMES[:game.seat_count], me))


def test_seats_are_named_and_the_viewer_is_you() -> None:
    seats = Seats(["Anna", "Bruno", "Carla"], 1)
    assert [seats(s) for s in range(3)] == ["Anna", "you", "Carla"]
    assert seats.playing("willi")(3) == "monster"  # Willi's fourth position with three people
    assert seats(3) == seats.playing("willi-stich")(3) == "seat 3"  # the monster is Willi's alone
    assert event_line({"type": "call", "seat": 0, "tricks": 2}, seats, "willi-stich") == "Anna calls 2"
    assert event_line({"type": "call", "seat": 1, "tricks": 2}, seats, "willi-stich") == "you call 2"
    assert event_line({"type": "play", "seat": 0, "card": "H9"}, seats, "willi-stich") == "Anna plays ♥9"
    assert event_line({"type": "passed", "seat": 2}, seats, "willi") == "Carla passes"


@pytest.mark.parametrize(("game", "event", "line"), [
    ("willi", {"type": "round_started", "round": 2, "start_player": 1}, "you lead the first trick"),
    ("willi", {"type": "round_started", "round": 2, "start_player": 0}, "Anna leads the first trick"),
    ("wie-waldi", {"type": "dog_complete", "dog": "d1", "owner": 1, "token_by": 1, "tokens_left": [1]},
     "dog d1 is complete: you own it"),
    ("willi-wacker", {"type": "tray_discarded", "owner": 0, "tray": "t5"}, "Anna's tray t5 goes"),
    ("willi-stich", {"type": "trick", "winner": 1, "cards": [[0, "H9"], [1, "HA"]]},
     "you take the trick (♥9 ♥A)"),
])
def test_verbs_agree_with_the_first_seat_a_line_names(game: str, event: Event, line: str) -> None:
    assert line in event_line(event, Seats(["Anna", "Bruno", "Carla"], 1), game)


@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_every_event_type_of_a_game_has_its_line(name: str) -> None:
    """Every event of the game's schema has a template in its words, or a line every game shares."""
    described = {definition["properties"]["type"]["const"]
                 for definition in load_schema(f"{name}.events")["$defs"].values()
                 if "const" in definition.get("properties", {}).get("type", {})}
    assert described - set(words_of(name).phrases) - set(PHRASES) == set()


@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_every_event_of_a_game_reads_as_one_line_without_raw_fields(name: str) -> None:
    entry = CATALOGUE[name]
    game = engine_class(name).new(entry.min_seats, {}, 4)
    seats, rng = Seats(NAMES, 0), random.Random(4)
    for _ in range(400):
        if game.over:
            break
        seat = game.to_act()[0]
        for event in game.apply(seat, rng.choice(game.view(seat)["legal"])):
            line = event_line(event, seats, name)
            assert "\n" not in line and "=" not in line and "{" not in line, line
            if "seat" in event:  # an event of one seat says whose
                assert any(n in line for n in ("you", *NAMES)), line


def test_a_willi_trick_is_a_table_of_names_and_cards_and_the_hand_is_sorted() -> None:
    game, events = play_until("willi", 4, 2, lambda g: len(g.view(None)["trick"]) == 3)
    me = game.to_act()[0]
    text = screen(game, events, me)
    trick = game.view(None)["trick"]
    lines = text.splitlines()
    start = lines.index("   trick:") + 1
    rows = lines[start:start + 3]
    assert [row.split()[:2] for row in rows] == [[Seats(NAMES[:4], me)(s), card] for s, card in trick]
    assert len({row.index(card) for row, (_, card) in zip(rows, trick, strict=True)}) == 1  # one column
    hand = own_hand(game.view(me))
    assert f"your hand: {' '.join(words_of('willi').sorted_cards(hand))}" in text
    colours = [card[0] for card in words_of("willi").sorted_cards(hand)]
    assert colours == sorted(colours, key="RYGB".index)


def test_a_willi_stich_hand_is_sorted_by_suit_then_rank_with_suit_signs() -> None:
    game, events = play_until("willi-stich", 4, 1, lambda g: g.view(None)["round"] == 8)
    me = 0
    text = screen(game, events, me)
    hand_line = next(line for line in text.splitlines() if "your hand:" in line)
    shown = hand_line.split(": ", 1)[1].split()
    order = {suit: i for i, suit in enumerate("♣♠♥♦")}
    ranks = ["7", "8", "9", "10", "J", "Q", "K", "A"]
    assert shown == sorted(shown, key=lambda c: (order[c[0]], ranks.index(c[1:])))
    assert len(shown) == len(game.view(me)["hand"])


def test_willi_wacker_trays_are_a_table_and_each_action_card_has_its_help() -> None:
    game, events = play_until(
        "willi-wacker", 4, 3,
        lambda g: len(g.view(None)["trays"]) >= 2 and any(
            a["type"] == "action" for a in g.view(g.to_act()[0])["legal"]))
    me = game.to_act()[0]
    text = screen(game, events, me)
    seats = Seats(NAMES[:4], me)
    for tray in game.view(None)["trays"]:
        assert any(line.split()[:2] == [tray["id"], seats(tray["owner"]).split()[0]]
                   for line in text.splitlines()), tray
    for line in text.splitlines():
        if "] play " in line and "TRINK" in line:
            assert "drink your tray" in line
    assert "lay" in text and "a set or a run" in text


def test_the_numbers_follow_the_sorted_hand_and_each_choice_has_a_help_line() -> None:
    game, events = play_until("willi", 4, 5, lambda g: g.view(None)["phase"] == "play")
    me = game.to_act()[0]
    view = game.view(me)
    choices = ordered_choices("willi", view["legal"])
    assert [a["card"] for a in choices] == words_of("willi").sorted_cards([a["card"] for a in view["legal"]])
    text = screen(game, events, me)
    numbered = [line for line in text.splitlines() if line.strip().startswith("[")]
    assert len(numbered) == len(choices)
    assert all(f"play {a['card']}" in line and " — " in line
               for a, line in zip(choices, numbered, strict=True))


@pytest.mark.parametrize(("name", "kind", "words"), [
    ("willi", "meinz", "Meinz! claim this trick"),
    ("willi", "exchange", "same colour"),
    ("willi-stich", "call", "how many tricks"),
    ("wie-waldi", "draw", "top card"),
    ("willi-wacker", "respond", "duel"),
])
def test_the_help_of_an_action_says_what_it_does(name: str, kind: str, words: str) -> None:
    """Each kind of choice is explained when it is offered (searched in random play)."""
    entry = CATALOGUE[name]
    for seed in range(30):
        try:
            game, events = play_until(name, entry.max_seats, seed, lambda g: any(
                a["type"] == kind for s in g.to_act() for a in g.view(s)["legal"]), limit=3000)
        except AssertionError:
            continue
        me = next(s for s in game.to_act() if any(a["type"] == kind for a in game.view(s)["legal"]))
        assert words in screen(game, events, me)
        return
    pytest.fail(f"no {kind} came up in {name}")

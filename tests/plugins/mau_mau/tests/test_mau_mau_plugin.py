"""Mau-Mau as a plugin: installed as its own package, Stammtisch finds and uses it unchanged.

Discovery through the entry point, the registry's engine, bots and words, whole games by
the bots (they end, keep the storage contract and never show a seat another seat's cards),
the schemas against what the engine makes, and the scoring service reading the result.
"""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from functools import cache
from importlib.metadata import distribution
from pathlib import Path
from typing import Any

import mau_mau
import pytest
from jsonschema import Draft202012Validator
from mau_mau.bots import HeuristicBot, favourite_suit
from mau_mau.cards import DECK, full_deck
from mau_mau.engine import MauMau
from mau_mau.words import WORDS, MauMauWords

from services.scoring.finished import FinishedGame
from shared.games.base import Event, Game
from shared.games.bots import RandomBot
from shared.games.catalog import CATALOGUE, ENTRY_POINT_GROUP, entry
from shared.games.errors import ErrorCode, RuleError
from shared.games.registry import bot_levels, engine_class, words_of
from shared.games.words import Words
from shared.sdk.phrases import Seats

STAMMTISCH = Path(__file__).resolve().parents[4]


@cache
def validator(kind: str) -> Draft202012Validator:
    """The game's own schema of ``kind`` ("view", "events", "actions")."""
    return Draft202012Validator(entry("mau-mau").schema(kind))


def assert_valid(kind: str, instance: Any, where: str) -> None:
    errors = [error.message[:200] for error in validator(kind).iter_errors(instance)]
    assert not errors, f"{where}: {kind} schema rejects {instance}: {errors[:3]}"


# --------------------------------------------------------------------- discovery


def test_the_catalogue_finds_the_game_through_its_own_distributions_entry_point() -> None:
    game = CATALOGUE["mau-mau"]
    assert game is mau_mau.GAME and entry("mau-mau") is game
    points = [point for point in distribution("stammtisch-mau-mau").entry_points
              if point.group == ENTRY_POINT_GROUP]
    assert [(point.name, point.value) for point in points] == [("mau-mau", "mau_mau:GAME")]
    assert STAMMTISCH / "shared" not in Path(mau_mau.__file__ or "").parents


def test_the_entry_has_the_games_facts() -> None:
    game = entry("mau-mau")
    assert (game.title, game.min_seats, game.max_seats, game.default_seats) == ("Mau-Mau", 2, 5, 3)
    assert game.service == "engine" and not game.duplicate_deals and game.package == "mau_mau"
    assert game.option_defaults() == {"hand_size": 5}
    assert (game.options[0].minimum, game.options[0].maximum) == (3, 7)
    assert game.resource("RULES.md").read_text().startswith("# Mau-Mau")


def test_the_package_init_stays_light() -> None:
    """The catalogue imports every game's __init__ at discovery: the engine must not come with it."""
    code = "import sys, mau_mau; assert 'mau_mau.engine' not in sys.modules, sorted(sys.modules)"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=STAMMTISCH)


def test_the_registry_gives_the_engine_bots_and_words() -> None:
    assert engine_class("mau-mau") is MauMau and MauMau.name == "mau-mau"
    assert bot_levels("mau-mau") == {"random": RandomBot, "heuristic": HeuristicBot}
    assert words_of("mau-mau") is WORDS and isinstance(WORDS, Words)


# --------------------------------------------------------------------- whole games by bots


def cards_in(value: Any) -> set[str]:
    """Every card named anywhere in JSON data."""
    if isinstance(value, str):
        return {value} & DECK
    if isinstance(value, list):
        return set().union(*map(cards_in, value))
    if isinstance(value, dict):
        return set().union(*map(cards_in, value.values()))
    return set()


def check_step(game: Game, events: list[Event], where: str) -> None:
    """Storage round trips; views show the top card and the own hand, nothing else hidden;
    views, legal actions and events match the schemas."""
    data = game.to_dict()
    assert json.loads(json.dumps(data)) == data
    restored = MauMau.from_dict(json.loads(json.dumps(data)))
    assert restored.to_dict() == data and restored.summary() == game.summary()
    summary = game.summary()
    for seat in [None, *range(game.seat_count)]:
        view = json.loads(json.dumps(game.view(seat)))
        own = set() if seat is None else set(summary["hands"][seat])
        leaked = cards_in(view) - own - {summary["top"]}
        assert not leaked, f"{where}: view({seat}) shows {sorted(leaked)}"
        assert_valid("view", view, f"{where} seat {seat}")
        for action in view["legal"]:
            assert_valid("actions", action, where)
    for event in events:
        assert_valid("events", event, where)
        assert not cards_in(event) - set(summary["pile"]) - {summary["top"]}, f"{where}: {event}"


def bot_game(seats: int, seed: int, bots: list[Any], checked: bool) -> MauMau:
    """A game played by ``bots`` (one per seat) from their views alone, to the end."""
    game = MauMau.new(seats, {}, seed)
    rng = random.Random(seed)
    for step in range(20_000):
        if game.over:
            return game
        seat = game.to_act()[0]
        events = game.apply(seat, bots[seat].choose(game.view(seat), rng))
        if checked:
            check_step(game, events, f"{seats} seats seed {seed} step {step}")
    raise AssertionError(f"{seats} seats seed {seed}: no end")


@pytest.mark.slow
@pytest.mark.parametrize("seats", [2, 3, 4, 5])
def test_bot_games_end_keep_the_contract_and_never_show_hidden_cards(seats: int) -> None:
    for seed in range(4):
        bots = [RandomBot() if seat % 2 == seed % 2 else HeuristicBot() for seat in range(seats)]
        game = bot_game(seats, seed, bots, checked=True)
        hands = game.summary()["hands"]
        assert game.winners() == [hand for hand in range(seats) if not hands[hand]]
        assert game.view(None)["scores"] == [-len(hand) for hand in hands]


def test_random_games_always_end() -> None:
    for seats in (2, 3, 4, 5):
        for seed in range(50):
            assert bot_game(seats, seed, [RandomBot()] * seats, checked=False).over


def test_the_heuristic_beats_the_random_bot() -> None:
    wins = sum(bot_game(2, seed, [HeuristicBot(), RandomBot()], checked=False).winners() == [0]
               for seed in range(200))
    assert wins > 120


def test_every_card_stays_in_the_game() -> None:
    game = MauMau.new(5, {}, 8)
    rng = random.Random(8)
    while not game.over:
        seat = game.to_act()[0]
        game.apply(seat, rng.choice(game.legal_actions(seat)))
        summary = game.summary()
        held = [card for hand in summary["hands"] for card in hand]
        assert sorted(held + summary["pile"] + summary["stock"]) == sorted(full_deck())


# --------------------------------------------------------------------- the heuristic bot


def choice(view_hand: list[str], legal: list[dict[str, Any]]) -> dict[str, Any]:
    return HeuristicBot().choose({"hand": view_hand, "legal": legal}, random.Random(0))


def test_the_heuristic_plays_a_plain_card_of_its_longest_suit_before_a_j() -> None:
    game = MauMau.new(2, {}, 0, {"hands": [["D9"], ["C9", "HJ", "SK", "S9", "SQ"]],
                                 "up": "CK", "stock": []})
    assert choice(game.view(1)["hand"], game.legal_actions(1)) == {"type": "play", "card": "SK"}


def test_the_heuristic_keeps_its_js_for_last_and_wishes_its_most_frequent_suit() -> None:
    game = MauMau.new(2, {}, 0, {"hands": [["D9"], ["HJ", "H9", "D8", "D10"]],
                                 "up": "CK", "stock": []})
    assert choice(game.view(1)["hand"], game.legal_actions(1)) == {
        "type": "play", "card": "HJ", "wish": "D"}
    assert favourite_suit([]) == "C" and favourite_suit(["SJ", "SJ", "H7"]) == "H"


def test_the_heuristic_draws_or_passes_when_nothing_matches() -> None:
    game = MauMau.new(2, {}, 0, {"hands": [["D9"], ["H9"]], "up": "CK", "stock": ["S7"]})
    assert choice(["H9"], game.legal_actions(1)) == {"type": "draw"}
    game.apply(1, {"type": "draw"})
    assert choice(["S7", "H9"], game.legal_actions(1)) == {"type": "pass"}


# --------------------------------------------------------------------- schemas and words


def test_the_schemas_are_valid_and_the_view_lists_the_action_schemas_variants() -> None:
    schemas = {kind: entry("mau-mau").schema(kind) for kind in ("view", "events", "actions")}
    for schema in schemas.values():
        Draft202012Validator.check_schema(schema)
    actions = schemas["actions"]
    variants = {actions["$defs"][ref["$ref"].rsplit("/", 1)[1]]["properties"]["type"]["const"]
                for ref in actions["oneOf"]}
    assert variants == set(MauMau.moves)
    for name, definition in actions["$defs"].items():
        assert schemas["view"]["$defs"][name] == definition, f"the view's {name} differs"
    assert schemas["view"]["$defs"]["Action"]["oneOf"] == actions["oneOf"]


@pytest.mark.parametrize(("action", "valid"), [
    ({"type": "play", "card": "HJ", "wish": "S"}, True), ({"type": "play", "card": "H9"}, True),
    ({"type": "play", "card": "HJ"}, False), ({"type": "play", "card": "H9", "wish": "S"}, False),
    ({"type": "play", "card": "H6"}, False), ({"type": "draw", "card": "H9"}, False),
    ({"type": "pass"}, True), ({"type": "shuffle"}, False),
])
def test_the_actions_schema_takes_exactly_the_well_formed_actions(action: dict[str, Any],
                                                                   valid: bool) -> None:
    """The schema and the engine agree on the shape: INVALID_ACTION exactly for what it rejects."""
    assert validator("actions").is_valid(action) is valid
    game = MauMau.new(2, {}, 0, {"hands": [["D9"], ["HJ", "H9"]], "up": "HK", "stock": []})
    try:
        game.apply(1, action)
    except RuleError as refusal:
        assert (refusal.code == ErrorCode.INVALID_ACTION) is not valid, refusal
    else:
        assert valid


def test_the_words_name_every_event_action_and_card() -> None:
    events = entry("mau-mau").schema("events")
    for ref in events["oneOf"]:
        definition = events["$defs"][ref["$ref"].rsplit("/", 1)[1]]
        kind = definition["properties"]["type"]["const"]
        if kind == "game_over":  # the table's shared line says who won with which totals
            continue
        names = set(re.findall(r"\{(\w+)(?::\w+)?\}", WORDS.phrases[kind]))
        assert names <= set(definition["properties"]) | {"who", "whose"}, kind
    assert set(WORDS.action_help) == set(MauMau.moves)
    assert sorted(full_deck(), key=WORDS.card_key) == full_deck()
    assert [WORDS.card_text(card) for card in ("H10", "SJ", "C7", "D-")] == ["♥10", "♠J", "♣7", "D-"]
    assert "wish ♦" in WORDS.help_for({"type": "play", "card": "CJ", "wish": "D"})
    assert WORDS.action_text({"type": "play", "card": "CJ", "wish": "D"}) == "play ♣J wish ♦"
    assert WORDS.help_for({"type": "draw"}) == MauMauWords.action_help["draw"]


def test_the_words_show_the_top_card_the_wish_and_a_drawn_card() -> None:
    game = MauMau.new(2, {}, 0, {"hands": [["D9", "S9"], ["HJ", "C9"]], "up": "CK",
                                 "stock": ["S7"]})
    game.apply(1, {"type": "play", "card": "HJ", "wish": "S"})
    game.apply(0, {"type": "draw"})
    lines = WORDS.view_lines(game.view(0), Seats(["Anna", "Bruno"], 0))
    assert lines[0] == "   top card: ♥J · wished suit: ♠"
    assert lines[1:] == ["   stock: 0 cards · pile: 2 cards", "   you drew ♠7: play it or pass"]
    other = WORDS.view_lines(game.view(1), Seats(["Anna", "Bruno"], 1))
    assert other[1:] == ["   stock: 0 cards · pile: 2 cards"]


# --------------------------------------------------------------------- scoring


def test_the_scoring_service_reads_the_result() -> None:
    game = MauMau.new(3, {}, 0, {"hands": [["D9", "SA"], ["C7"], ["H9"]], "up": "CK",
                                 "stock": []})
    over = game.apply(1, {"type": "play", "card": "C7"})[-1]
    message = {"table_id": "t1", "seq": 1, "game": "mau-mau", "game_no": 1,
               "players": ["anna", "bruno", "carla"], "event": over, "at": 1.0}
    result = FinishedGame.from_message("t1:1:0", json.dumps(message).encode())
    assert (result.scores, result.winners, result.people()) == ([-2, 0, -1], [1], [0, 1, 2])

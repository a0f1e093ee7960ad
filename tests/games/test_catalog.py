"""The game catalogue agrees with the engines and the services that read it."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from services.lobby.catalog import carried_over
from shared.games.base import Game
from shared.games.catalog import CATALOGUE, played_by
from shared.games.errors import ErrorCode, RuleError, SetupError
from shared.games.registry import bot_levels, engine_class, words_of
from shared.games.words import Words

GAMES = sorted(CATALOGUE)
CORE = Path(__file__).resolve().parents[2] / "shared" / "games"


def test_the_core_imports_neither_grpc_nor_protobuf() -> None:
    banned = re.compile(r"^\s*(from|import)\s+(grpc|google\.protobuf|shared\.api|shared\.rpc)\b",
                        re.MULTILINE)
    offenders = [str(path.relative_to(CORE)) for path in CORE.rglob("*.py")
                 if banned.search(path.read_text(encoding="utf-8"))]
    assert not offenders


def test_each_game_is_played_by_exactly_one_service_the_arbiter_for_simultaneous_ones() -> None:
    engine, arbiter = played_by("engine"), played_by("arbiter")
    assert engine | arbiter == set(CATALOGUE) and not engine & arbiter
    assert arbiter == {name for name, game in CATALOGUE.items() if game.simultaneous}


@pytest.mark.parametrize("name", GAMES)
def test_the_listed_options_are_exactly_what_the_engine_accepts(name: str) -> None:
    game, cls = CATALOGUE[name], engine_class(name)
    assert all(option.doc for option in game.options)
    created = cls.new(game.default_seats, game.option_defaults(), 3)
    assert created.to_dict() == cls.new(game.default_seats, {}, 3).to_dict()
    with pytest.raises(SetupError):
        cls.new(game.default_seats, {"no_such_option": 1}, 3)
    assert set(game.carried_over) <= {option.name for option in game.options}
    short = cls.new(game.default_seats, game.short_options, 3)
    assert short.to_dict() != created.to_dict() or not game.short_options
    assert bot_levels(name)


@pytest.mark.parametrize("name", GAMES)
def test_every_game_package_holds_what_the_catalogue_promises(name: str) -> None:
    """Its rules, its schemas (view, events, actions), its scenarios, its bots and its words."""
    game = CATALOGUE[name]
    assert game.resource("RULES.md").is_file() and game.resource("cases").is_dir()
    assert all(game.schema(kind)["$defs"] for kind in ("view", "events", "actions"))
    assert isinstance(words_of(name), Words) and bot_levels(name)


@pytest.mark.parametrize("name", GAMES)
def test_leave_and_chat_are_game_actions_exactly_where_the_catalogue_says(name: str) -> None:
    game = CATALOGUE[name]
    for action in ({"type": "chat", "text": "Prost"}, {"type": "leave"}):
        table = engine_class(name).new(game.default_seats, {}, 4)
        try:
            table.apply(0, action)
        except RuleError as err:
            assert not game.leave_and_chat and err.code == ErrorCode.INVALID_ACTION
        else:
            assert game.leave_and_chat


def start_of_round(game: Game, rng: random.Random, round_no: int) -> Game:
    """Random legal play until the round ``round_no`` has been dealt."""
    while game.summary()["round"] < round_no:
        seat = game.to_act()[0]
        game.apply(seat, rng.choice(game.legal_actions(seat)))
    return game


@pytest.mark.parametrize("name", [name for name in GAMES if CATALOGUE[name].duplicate_deals])
def test_duplicate_deal_games_deal_every_round_the_same_however_it_was_played(name: str) -> None:
    seats = CATALOGUE[name].default_seats
    deals = [start_of_round(engine_class(name).new(seats, {}, 17), random.Random(play), 3)
             for play in range(3)]
    assert len({repr(game.summary()["hands"]) for game in deals}) == 1
    assert len({repr(game.summary()["scores"]) for game in deals}) > 1, "the plays were alike"


def test_carried_over_options_come_from_the_final_view() -> None:
    finished = engine_class("willi-stich").new(3, {"start_round": 19, "first_dealer": 1}, 2)
    while not finished.over:
        seat = finished.to_act()[0]
        finished.apply(seat, finished.legal_actions(seat)[0])
    assert carried_over("willi-stich", finished) == {"first_dealer": 2}
    assert carried_over("willi", engine_class("willi").new(4, {}, 1)) == {}

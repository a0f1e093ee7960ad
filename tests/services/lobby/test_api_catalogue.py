"""The API names games by catalogue name, checks table options against the game's option specs,
carries actions as type plus JSON fields, and lists the catalogue (ListGames)."""

from __future__ import annotations

import json
from typing import Any

import grpc
import pytest

from services.lobby.catalog import game_options, games_proto, new_game
from shared.api.stammtisch.v1 import common_pb2, history_pb2
from shared.archive.messages import archive_of
from shared.games.catalog import CATALOGUE
from shared.games.errors import RuleError
from shared.games.registry import bot_levels
from shared.rpc.actions import MAX_FIELDS_JSON, action_of, action_proto
from shared.rpc.catalog import PLAY_SERVICES, game_named, game_or_all, play_request
from shared.rpc.errors import ServiceError

GAMES = sorted(CATALOGUE)


def refused(call: Any, *args: Any) -> str:
    """The message of the INVALID_ARGUMENT the call raises."""
    with pytest.raises(ServiceError) as caught:
        call(*args)
    assert caught.value.code == grpc.StatusCode.INVALID_ARGUMENT
    return caught.value.message


def options(**chosen: Any) -> common_pb2.TableOptions:
    proto = common_pb2.TableOptions()
    proto.game_options.update(chosen)
    return proto


def test_games_are_named_by_catalogue_name_and_an_unknown_one_names_the_known_games() -> None:
    assert [game_named(name) for name in GAMES] == GAMES
    message = refused(game_named, "GAME_WILLI")
    assert "GAME_WILLI" in message and all(name in message for name in GAMES)
    assert game_or_all("") is None and game_or_all("willi") == "willi"
    refused(game_named, "")


def test_an_unknown_option_is_refused_by_name_with_the_game_s_options() -> None:
    message = refused(game_options, "willi-stich", options(start_rnd=17))
    assert "start_rnd" in message and "start_round" in message


def test_a_wrongly_typed_option_is_refused_by_name() -> None:
    assert "start_round" in refused(game_options, "willi-stich", options(start_round="17"))
    assert "start_round" in refused(game_options, "willi-stich", options(start_round=17.5))
    assert "target" in refused(game_options, "willi-wacker", options(target=True))


def test_an_option_out_of_its_bounds_is_refused_by_name() -> None:
    message = refused(game_options, "willi-stich", options(start_round=20))
    assert "start_round" in message and "1 to 19" in message
    assert "round_seconds" in refused(game_options, "wie-waldi", options(round_seconds=3601))


def test_a_null_option_is_refused_rather_than_meaning_no_limit() -> None:
    assert "round_seconds" in refused(game_options, "wie-waldi", options(round_seconds=None))


def test_json_numbers_are_ints_for_int_options_and_stay_numbers_otherwise() -> None:
    chosen = game_options("willi-stich", options(start_round=17.0))
    assert chosen == {"start_round": 17} and type(chosen["start_round"]) is int
    assert game_options("wie-waldi", options(round_seconds=2.5)) == {"round_seconds": 2.5}
    assert game_options("willi", options()) == {}


def test_willi_wacker_s_max_rounds_is_settable_through_the_api() -> None:
    chosen = game_options("willi-wacker", options(max_rounds=3))
    assert chosen == {"max_rounds": 3}
    assert new_game("willi-wacker", 3, chosen, seed=1).to_dict()["options"]["max_rounds"] == 3
    assert "max_rounds" in refused(game_options, "willi-wacker", options(max_rounds=0))


def test_list_games_lists_every_catalogue_game_with_its_options_schemas_and_service() -> None:
    games = {game.name: game for game in games_proto().games}
    assert sorted(games) == GAMES
    for name, entry in CATALOGUE.items():
        listed = games[name]
        assert (listed.title, listed.min_seats, listed.max_seats, listed.default_seats) == (
            entry.title, entry.min_seats, entry.max_seats, entry.default_seats)
        assert listed.simultaneous == entry.simultaneous
        assert listed.service == PLAY_SERVICES[entry.service].full_name
        assert listed.duplicate_deals == entry.duplicate_deals
        assert listed.leave_and_chat == entry.leave_and_chat
        assert list(listed.bot_levels) == sorted(bot_levels(name))
        assert [(o.name, o.doc) for o in listed.options] == [(o.name, o.doc) for o in entry.options]
        for option, spec in zip(listed.options, entry.options, strict=True):
            assert json.loads(json.dumps(option.default_value.number_value)) == spec.default
            assert (option.minimum if option.HasField("minimum") else None) == spec.minimum
            assert (option.maximum if option.HasField("maximum") else None) == spec.maximum
            assert option.types
        files = sorted(item.name.removesuffix(".schema.json") for item in entry.resource("schemas").iterdir()
                       if item.name.endswith(".schema.json"))
        assert sorted(listed.schemas_json) == files and {"view", "events"} <= set(files)
        assert all(json.loads(listed.schemas_json[kind]) == entry.schema(kind) for kind in files)
    assert list(games["wie-waldi"].options[0].types) == ["integer", "number"]
    assert games["wie-waldi"].service == "stammtisch.v1.ArbiterService"


def test_an_action_is_its_type_and_its_fields_as_one_json_object() -> None:
    action = {"type": "discard", "card": "R5", "picks": {"1": 2}}
    sent = action_proto(action)
    assert sent.type == "discard" and json.loads(sent.fields_json) == {"card": "R5", "picks": {"1": 2}}
    assert action_of(sent) == action
    assert action_proto({"type": "pass"}).fields_json == ""
    assert action_of(common_pb2.Action(type="pass")) == {"type": "pass"}


@pytest.mark.parametrize("fields_json", ["[1, 2]", "\"R5\"", "17", "null", "{\"card\": ", "R5",
                                         "{\"type\": \"play\"}",
                                         json.dumps({"text": "x" * MAX_FIELDS_JSON})])
def test_fields_json_that_is_no_json_object_is_invalid_argument(fields_json: str) -> None:
    refused(action_of, common_pb2.Action(type="play", fields_json=fields_json))


def test_an_action_without_a_type_is_still_the_rules_refusal() -> None:
    with pytest.raises(RuleError):
        action_of(common_pb2.Action(fields_json="{}"))


def test_both_play_services_take_the_same_requests_round_included() -> None:
    for service in PLAY_SERVICES:
        act = play_request(service, "Act", table_id="t", action_id="a", round=2)
        play = play_request(service, "Play", table_id="t", round=None)
        assert act.HasField("round") and not play.HasField("round")  # type: ignore[attr-defined]


def test_a_replay_saved_with_the_old_game_enum_still_loads() -> None:
    reply = history_pb2.GetReplayResponse(seed="1", seat_count=3, options_json="{}")
    reply.summary.game = "GAME_WILLI_STICH"
    assert archive_of(reply).game == "willi-stich"
    reply.summary.game = "willi-stich"
    assert archive_of(reply).game == "willi-stich"
    reply.summary.game = "GAME_SKAT"
    with pytest.raises(ValueError):
        archive_of(reply)

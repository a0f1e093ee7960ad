"""Bad input on every lobby RPC gets a deliberate status with a message, never INTERNAL."""

from __future__ import annotations

from typing import Any

import grpc
import pytest

from shared.api.stammtisch.v1 import common_pb2, lobby_pb2
from shared.games.catalog import CATALOGUE
from shared.sdk.client import Endpoints, StammtischClient
from tests.support.stack import logged_in

pytestmark = pytest.mark.integration

INVALID, NOT_FOUND, PRECONDITION = (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.NOT_FOUND,
                                    grpc.StatusCode.FAILED_PRECONDITION)
STICH = "willi-stich"


def options(turn_seconds: int | None = None, **chosen: Any) -> common_pb2.TableOptions:
    """TableOptions with the game's options ``chosen``."""
    proto = common_pb2.TableOptions(turn_seconds=turn_seconds)
    proto.game_options.update(chosen)
    return proto


async def refusal(player: StammtischClient, method: str, request: Any) -> tuple[grpc.StatusCode, str]:
    """The status and message a unary call is refused with."""
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await getattr(player.lobby, method)(request, metadata=player.auth)
    return info.value.code(), info.value.details() or ""


async def status_of(player: StammtischClient, method: str, request: Any) -> grpc.StatusCode:
    """The status a call ends with (streams are read to their first answer)."""
    try:
        call = getattr(player.lobby, method)(request, metadata=player.auth)
        if isinstance(call, grpc.aio.UnaryStreamCall):
            await call.read()
            call.cancel()
        else:
            await call
    except grpc.aio.AioRpcError as err:
        assert err.details(), (method, request)
        return err.code()
    return grpc.StatusCode.OK


async def test_every_lobby_rpc_refuses_bad_input_clearly(stack: dict[str, str]) -> None:
    async with logged_in(Endpoints.of(stack), "Anna", "Ben", "Cleo", "Dora") as (anna, ben, cleo, dora):
        table = await anna.create_table("willi-stich", 3)
        full = await anna.create_table("willi-stich", 3)
        await ben.join(full.table_id)
        await cleo.join(full.table_id)
        tid, fid = table.table_id, full.table_id
        cases: list[tuple[StammtischClient, str, Any, grpc.StatusCode]] = [
            (anna, "CreateTable", lobby_pb2.CreateTableRequest(seats=3), INVALID),
            (anna, "CreateTable", lobby_pb2.CreateTableRequest(game="GAME_WILLI", seats=3), INVALID),
            (anna, "CreateTable", lobby_pb2.CreateTableRequest(game=STICH, seats=2), INVALID),
            (anna, "CreateTable", lobby_pb2.CreateTableRequest(
                game=STICH, seats=3, options=options(start_round=20)), INVALID),
            (anna, "CreateTable", lobby_pb2.CreateTableRequest(
                game=STICH, seats=3, options=options(first_dealer=3)), INVALID),
            (anna, "CreateTable", lobby_pb2.CreateTableRequest(
                game="willi", seats=4, options=options(target=50)), INVALID),
            (anna, "CreateTable", lobby_pb2.CreateTableRequest(
                game=STICH, seats=3, options=options(turn_seconds=-1)), INVALID),
            (anna, "ListTables", lobby_pb2.ListTablesRequest(limit=-1), INVALID),
            (anna, "ListTables", lobby_pb2.ListTablesRequest(game="skat"), INVALID),
            (anna, "GetTable", lobby_pb2.GetTableRequest(), INVALID),
            (anna, "GetTable", lobby_pb2.GetTableRequest(table_id="no.such>table"), INVALID),
            (anna, "GetTable", lobby_pb2.GetTableRequest(table_id="nope"), NOT_FOUND),
            (ben, "JoinTable", lobby_pb2.JoinTableRequest(table_id="nope"), NOT_FOUND),
            (ben, "JoinTable", lobby_pb2.JoinTableRequest(table_id=tid, seat=3), INVALID),
            (ben, "JoinTable", lobby_pb2.JoinTableRequest(table_id=tid, seat=-1), INVALID),
            (ben, "JoinTable", lobby_pb2.JoinTableRequest(table_id=tid, seat=0), PRECONDITION),
            (anna, "JoinTable", lobby_pb2.JoinTableRequest(table_id=tid), PRECONDITION),
            (anna, "JoinTable", lobby_pb2.JoinTableRequest(table_id=tid, spectator=True), PRECONDITION),
            (dora, "JoinTable", lobby_pb2.JoinTableRequest(table_id=fid), PRECONDITION),
            (dora, "LeaveTable", lobby_pb2.LeaveTableRequest(table_id=tid), PRECONDITION),
            (dora, "LeaveTable", lobby_pb2.LeaveTableRequest(table_id=""), INVALID),
            (dora, "SetReady", lobby_pb2.SetReadyRequest(table_id=tid, ready=True), PRECONDITION),
            (dora, "SetReady", lobby_pb2.SetReadyRequest(table_id="nope", ready=True), NOT_FOUND),
            (anna, "AddBot", lobby_pb2.AddBotRequest(table_id=tid, level="genius"), INVALID),
            (anna, "AddBot", lobby_pb2.AddBotRequest(table_id=tid, seat=9), INVALID),
            # The message quotes the level: clipped, it still fits the status trailers.
            (anna, "AddBot", lobby_pb2.AddBotRequest(table_id=tid, level="ü" * 20_000), INVALID),
            (anna, "AddBot", lobby_pb2.AddBotRequest(table_id=tid, seat=0), PRECONDITION),
            (dora, "AddBot", lobby_pb2.AddBotRequest(table_id=tid), PRECONDITION),
            (anna, "AddBot", lobby_pb2.AddBotRequest(table_id=fid), PRECONDITION),
            (anna, "QuickMatch", lobby_pb2.QuickMatchRequest(seats=4), INVALID),
            (anna, "QuickMatch", lobby_pb2.QuickMatchRequest(game="Willi", seats=4), INVALID),
            (anna, "QuickMatch", lobby_pb2.QuickMatchRequest(game=STICH, seats=9), INVALID),
            (anna, "SendChat", lobby_pb2.SendChatRequest(table_id=tid, text=""), INVALID),
            (anna, "SendChat", lobby_pb2.SendChatRequest(table_id=tid, text="x" * 201), INVALID),
            (anna, "SendChat", lobby_pb2.SendChatRequest(table_id=tid, text="bell\x07"), INVALID),
            (anna, "SendChat", lobby_pb2.SendChatRequest(table_id=tid, text="   "), INVALID),
            (dora, "SendChat", lobby_pb2.SendChatRequest(table_id=tid, text="hi"), PRECONDITION),
            (dora, "SendChat", lobby_pb2.SendChatRequest(table_id="nope", text="hi"), NOT_FOUND),
            (anna, "WatchTable", lobby_pb2.WatchTableRequest(), INVALID),
            (anna, "WatchTable", lobby_pb2.WatchTableRequest(table_id="nope"), NOT_FOUND),
        ]
        outcomes = [(method, request, await status_of(player, method, request))
                    for player, method, request, _ in cases]
        wrong = [(method, str(request), got, want) for (method, request, got), (*_, want)
                 in zip(outcomes, cases, strict=True) if got != want]
        assert not wrong


@pytest.mark.parametrize(("game", "chosen", "named"), [
    ("willi-stich", {"start_rnd": 17}, "start_rnd"),  # unknown: the message lists start_round too
    ("willi-stich", {"start_round": "17"}, "start_round"),  # wrong type
    ("willi-stich", {"start_round": 17.5}, "start_round"),  # no whole number
    ("willi-wacker", {"target": True}, "target"),
    ("willi-stich", {"start_round": 20}, "start_round"),  # out of range
    ("wie-waldi", {"round_seconds": 3601}, "round_seconds"),
    ("wie-waldi", {"round_seconds": None}, "round_seconds"),  # null is no "no limit" here
    ("willi-wacker", {"max_rounds": 0}, "max_rounds"),
])
async def test_a_bad_game_option_is_invalid_argument_naming_the_option(
        stack: dict[str, str], game: str, chosen: dict[str, Any], named: str) -> None:
    async with logged_in(Endpoints.of(stack), "Anna") as (anna,):
        code, message = await refusal(anna, "CreateTable", lobby_pb2.CreateTableRequest(
            game=game, seats=3, options=options(**chosen)))
    assert code == INVALID and named in message
    if named == "start_rnd":
        assert "start_round" in message


async def test_an_unknown_game_is_invalid_argument_naming_the_known_games(stack: dict[str, str]) -> None:
    async with logged_in(Endpoints.of(stack), "Anna") as (anna,):
        code, message = await refusal(anna, "CreateTable", lobby_pb2.CreateTableRequest(game="skat", seats=3))
        games = [game.name for game in await anna.games()]
    assert code == INVALID and "skat" in message and all(name in message for name in games)


async def test_list_games_needs_no_token_and_lists_the_catalogue(stack: dict[str, str]) -> None:
    async with StammtischClient(Endpoints.of(stack)) as anonymous:
        games = await anonymous.games()
    assert [game.name for game in games] == sorted(CATALOGUE)
    wacker = next(game for game in games if game.name == "willi-wacker")
    assert "max_rounds" in [option.name for option in wacker.options]
    assert {game.service for game in games} == {"stammtisch.v1.EngineService", "stammtisch.v1.ArbiterService"}


async def test_lobby_calls_need_a_token(stack: dict[str, str]) -> None:
    async with StammtischClient(Endpoints.of(stack)) as anonymous:
        assert anonymous.auth == ()  # never logged in: the calls carry no token
        for method, request in (("ListTables", lobby_pb2.ListTablesRequest()),
                                ("WatchTable", lobby_pb2.WatchTableRequest(table_id="x"))):
            assert await status_of(anonymous, method, request) == grpc.StatusCode.UNAUTHENTICATED

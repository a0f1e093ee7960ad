"""The lobby end to end over real gRPC, Redis and NATS: from seats to running games and back."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
from collections.abc import AsyncIterator

import grpc
import nats
import pytest
from test_lobby_support import Player, eventually, play_turns, players, table_status

from shared.api.stammtisch.v1 import (
    arbiter_pb2,
    arbiter_pb2_grpc,
    common_pb2,
    engine_pb2,
    engine_pb2_grpc,
    lobby_pb2,
)
from shared.config import Settings
from shared.rpc.errors import rule_code_name, rule_violation_of

pytestmark = pytest.mark.integration

STICH, WILLI = common_pb2.GAME_WILLI_STICH, common_pb2.GAME_WILLI
WAITING, PLAYING, BETWEEN = (lobby_pb2.TABLE_STATUS_WAITING, lobby_pb2.TABLE_STATUS_PLAYING,
                             lobby_pb2.TABLE_STATUS_BETWEEN_GAMES)


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """Bots move quickly so that games finish within the test."""
    return dataclasses.replace(settings, bot_delay_seconds=0.05)


@contextlib.asynccontextmanager
async def watching(player: Player, table_id: str) -> AsyncIterator[list[lobby_pb2.WatchTableResponse]]:
    """Collect a table's WatchTable stream in the background."""
    seen: list[lobby_pb2.WatchTableResponse] = []
    call = player.lobby.WatchTable(lobby_pb2.WatchTableRequest(table_id=table_id), metadata=player.auth)

    async def collect() -> None:
        async for item in call:
            seen.append(item)

    task = asyncio.create_task(collect())
    try:
        while not seen:
            await asyncio.sleep(0.01)
        yield seen
    finally:
        call.cancel()
        with contextlib.suppress(asyncio.CancelledError, grpc.aio.AioRpcError):
            await task


async def last_lifecycle(settings: Settings, table_id: str, change: str) -> dict[str, object]:
    """The newest lifecycle message of a table on JetStream."""
    client = await nats.connect(settings.nats_url)
    try:
        stream = f"{settings.key_prefix.upper()}_TABLES"
        msg = await client.jetstream().get_last_msg(
            stream, f"{settings.key_prefix}.tables.{table_id}.{change}")
        return dict(json.loads(msg.data))
    finally:
        await client.close()


async def test_seats_fill_up_and_the_game_runs_for_every_seat(stack: dict[str, str],
                                                            settings: Settings) -> None:
    async with players(stack, "Anna", "Ben", "Cleo", "Dora") as (anna, ben, cleo, dora):
        table = await anna.create(STICH, 3, start_round=3)
        table_id = table.table_id
        assert table.status == WAITING
        assert (table.seats[0].player_id, table.seats[0].name) == (anna.player_id, "Anna")
        assert table.options.start_round == 3 and table.options.turn_seconds == 60

        listed = await ben.lobby.ListTables(lobby_pb2.ListTablesRequest(game=STICH, open_only=True),
                                            metadata=ben.auth)
        assert [t.table_id for t in listed.tables] == [table_id]
        others = await ben.lobby.ListTables(lobby_pb2.ListTablesRequest(game=WILLI), metadata=ben.auth)
        assert not others.tables

        assert (await ben.join(table_id, seat=2)).seat == 2
        assert (await cleo.join(table_id)).seat == 1
        watched = await dora.join(table_id, spectator=True)
        assert watched.seat == -1 and watched.table.spectators == 1

        await anna.ready(table_id)
        await ben.ready(table_id)
        table = await cleo.ready(table_id)
        assert table.status == PLAYING and table.games_played == 1
        assert all(seat.ready for seat in table.seats)

        for player, seat in ((anna, 0), (cleo, 1), (ben, 2)):
            update, view = await player.view(table_id)
            assert update.seat == seat and len(view["hand"]) == 3
        update, view = await dora.view(table_id)
        assert update.seat == -1 and view["hand"] is None and view["hands"] == [None] * 3
        first, _ = await anna.view(table_id)
        assert first.seq == 1 and [e.type for e in first.events] == ["game_started"]
        payload = await last_lifecycle(settings, table_id, "started")
        assert payload["game_no"] == 1
        assert payload["players"] == [anna.player_id, cleo.player_id, ben.player_id]

        listed = await ben.lobby.ListTables(lobby_pb2.ListTablesRequest(game=STICH, open_only=True),
                                            metadata=ben.auth)
        assert not listed.tables
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await anna.ready(table_id)
        assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION


async def test_leaving_a_waiting_table_frees_the_seat_and_the_last_one_closes_it(
        stack: dict[str, str]) -> None:
    async with players(stack, "Anna", "Ben") as (anna, ben):
        table = await anna.create(WILLI, 3)
        await ben.join(table.table_id)
        await anna.ready(table.table_id)
        table = await anna.leave(table.table_id)
        assert table.seats[0].player_id == "" and table.seats[1].player_id == ben.player_id
        await ben.leave(table.table_id)
        with pytest.raises(grpc.aio.AioRpcError) as gone:
            await anna.table(table.table_id)
        assert gone.value.code() == grpc.StatusCode.NOT_FOUND


async def test_a_stich_series_leave_chat_newcomers_and_the_dealer_moving_on(
        stack: dict[str, str]) -> None:
    async with players(stack, "Anna", "Ben", "Cleo", "Dora") as (anna, ben, cleo, dora):
        table = await anna.create(STICH, 3, start_round=18, first_dealer=2, turn_seconds=0)
        table_id = table.table_id
        await ben.join(table_id)
        await anna.add_bot(table_id, "random")
        await dora.join(table_id, spectator=True)
        async with watching(dora, table_id) as news:
            assert news[0].change == "snapshot"
            await anna.chat(table_id, "Servus!")
            await anna.ready(table_id)
            assert (await ben.ready(table_id)).status == PLAYING

            # Round 18: talk is a rules action in the game log.
            await ben.chat(table_id, "Viel Glück")
            update, _ = await anna.view(table_id)
            assert [json.loads(e.data_json) for e in update.events] == [
                {"type": "chat", "seat": 1, "text": "Viel Glück"}]

            view = await play_turns([anna, ben], table_id, lambda v: v["round"] == 19)
            # Round 19, the forehead round: no table talk (rules code NOT_ALLOWED).
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await ben.chat(table_id, "Du hast das Ass!")
            assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
            violation = rule_violation_of(refused.value)
            assert violation is not None and rule_code_name(violation) == "NOT_ALLOWED"

            # A newcomer during the game waits for the next one.
            joined = await cleo.join(table_id)
            assert joined.seat == -1 and [w.player_id for w in joined.table.waiting] == [cleo.player_id]

            # Ben leaves mid-game: his total is frozen, the round is dealt again, the game goes on.
            frozen = view["scores"][1]
            table = await ben.leave(table_id)
            assert table.status == PLAYING and table.seats[1].player_id == ""
            _, after = await anna.view(table_id)
            assert after["active"] == [True, False, True] and not after["over"]
            assert after["round"] == 19 and after["scores"][1] == frozen

            final = await play_turns([anna], table_id, lambda v: v["over"])
            assert final["scores"][1] == frozen and final["next_dealer"] == 1

            table = await table_status(anna, table_id, BETWEEN)
            assert table.seats[1].player_id == cleo.player_id and not table.waiting
            assert not table.seats[0].ready and table.seats[2].bot and table.games_played == 1

            await anna.ready(table_id)
            table = await cleo.ready(table_id)
            assert table.status == PLAYING and table.games_played == 2
            update, view = await cleo.view(table_id)
            assert update.seat == 1 and view["round"] == 18 and view["dealer"] == 1

            await anna.chat(table_id, "Noch eine!")
            await asyncio.sleep(0.2)
        changes = [item.change for item in news]
        for expected in ("chat", "ready", "game_started", "waiting", "left", "game_finished"):
            assert expected in changes, (expected, changes)
        chats = [(item.player_id, item.text) for item in news if item.change == "chat"]
        assert chats == [(anna.player_id, "Servus!"), (ben.player_id, "Viel Glück"),
                         (anna.player_id, "Noch eine!")]


async def test_a_bot_takes_over_a_willi_seat_and_its_player_reclaims_it(stack: dict[str, str]) -> None:
    async with players(stack, "Anna", "Ben") as (anna, ben):
        table = await anna.create(WILLI, 4, turn_seconds=0)
        table_id = table.table_id
        await ben.join(table_id)
        await anna.add_bot(table_id)
        await anna.add_bot(table_id, "random")
        await anna.ready(table_id)
        assert (await ben.ready(table_id)).status == PLAYING

        table = await anna.leave(table_id)
        assert table.seats[0].player_id == anna.player_id and table.seats[0].bot
        update, _ = await ben.view(table_id)
        assert [e.type for e in update.events] == ["seat_bot"]
        # The clock worker's bot discards for Anna's seat (and the two added bots discard too).
        async def bots_discarded() -> bool:
            _, view = await ben.view(table_id)
            return bool(view["discarded"] == [True, False, True, True])
        await eventually(bots_discarded, what="the bots, Anna's stand-in included, to discard")

        rejoined = await anna.join(table_id)
        assert rejoined.seat == 0 and not rejoined.table.seats[0].bot
        update, _ = await anna.view(table_id)
        assert [e.type for e in update.events] == ["seat_reclaimed"]

        view = await play_turns([ben], table_id, lambda v: v["phase"] == "play")
        assert view["to_act"] == [0]
        _, mine = await anna.view(table_id)
        played = await anna.act(table_id, mine["legal"][0])
        assert played.seat == 0



@pytest.mark.parametrize(("game", "seats", "options", "service"), [
    (common_pb2.GAME_WILLI_WACKER, 3, {"target": 50, "first_dealer": 1}, "engine"),
    (common_pb2.GAME_WIE_WALDI, 2, {"round_seconds": 30}, "arbiter"),
])
async def test_every_game_gets_tables_with_its_options(stack: dict[str, str], game: int, seats: int,
                                                       options: dict[str, int], service: str) -> None:
    async with players(stack, "Anna") as (anna,):
        table = await anna.create(game, seats, **options)
        for name, value in options.items():
            assert getattr(table.options, name) == value
        for _ in range(seats - 1):
            table = await anna.add_bot(table.table_id)
        assert all(seat.bot for seat in table.seats[1:]) and table.status == WAITING
        table = await anna.ready(table.table_id)
        assert table.status == PLAYING
        async with grpc.aio.insecure_channel(stack[service]) as channel:
            if service == "arbiter":
                reply = await arbiter_pb2_grpc.ArbiterServiceStub(channel).GetView(
                    arbiter_pb2.ArbiterServiceGetViewRequest(table_id=table.table_id), metadata=anna.auth)
            else:
                reply = await engine_pb2_grpc.EngineServiceStub(channel).GetView(
                    engine_pb2.GetViewRequest(table_id=table.table_id), metadata=anna.auth)
        assert reply.update.seat == 0 and json.loads(reply.update.view_json)

"""The lobby end to end over real gRPC, Redis and NATS: from seats to running games and back."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import random
from collections.abc import AsyncIterator, Callable
from typing import Any

import grpc
import nats
import pytest

from shared.api.stammtisch.v1 import lobby_pb2
from shared.config import Settings
from shared.games.registry import bot_levels
from shared.rpc.errors import rule_code_name, rule_violation_of
from shared.sdk.botplayer import play_seat
from shared.sdk.client import Endpoints, RefusedAction, StammtischClient
from tests.support.stack import bot_table, eventually, logged_in

pytestmark = pytest.mark.integration

STICH, WILLI = "willi-stich", "willi"
WAITING, PLAYING, BETWEEN = (lobby_pb2.TABLE_STATUS_WAITING, lobby_pb2.TABLE_STATUS_PLAYING,
                             lobby_pb2.TABLE_STATUS_BETWEEN_GAMES)


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """Bots move quickly so that games finish within the test."""
    return dataclasses.replace(settings, bot_delay_seconds=0.05)


@contextlib.asynccontextmanager
async def watching(player: StammtischClient,
                   table_id: str) -> AsyncIterator[list[lobby_pb2.WatchTableResponse]]:
    """Collect a table's WatchTable stream in the background."""
    seen: list[lobby_pb2.WatchTableResponse] = []

    async def collect() -> None:
        async for item in player.watch(table_id):
            seen.append(item)

    task = asyncio.create_task(collect())
    try:
        await eventually(lambda: seen, what="the first news of the table")
        yield seen
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, grpc.aio.AioRpcError):
            await task


async def table_status(player: StammtischClient, table_id: str, status: int) -> lobby_pb2.Table:
    """Wait until the table has ``status``."""
    async def probe() -> lobby_pb2.Table | None:
        table = await player.get_table(table_id)
        return table if table.status == status else None
    return await eventually(probe, what=f"table status {lobby_pb2.TableStatus.Name(status)}")


async def play_turns(people: list[StammtischClient], table_id: str,
                     until: Callable[[dict[str, Any]], bool], timeout: float = 20.0) -> dict[str, Any]:
    """The people play their first legal action whenever they are to act (bots play by the
    clock) until ``until(view)`` holds for one of them; returns that view."""
    async def step() -> dict[str, Any] | None:
        for person in people:
            update = await person.view(table_id)
            if until(update.view):
                return update.view
            if update.seat in update.view["to_act"] and update.view["legal"]:
                try:
                    await person.act(table_id, update.view["legal"][0])
                except RefusedAction as refused:  # a bot or clock moved first
                    if refused.code == "INVALID_ACTION":
                        raise
        return None
    return await eventually(step, timeout, what="the game to reach the expected state")


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
    async with logged_in(Endpoints.of(stack), "Anna", "Ben", "Cleo", "Dora") as (anna, ben, cleo, dora):
        table = await anna.create_table(STICH, 3, options={"start_round": 3})
        table_id = table.table_id
        assert table.status == WAITING
        assert (table.seats[0].player_id, table.seats[0].name) == (anna.player_id, "Anna")
        assert table.options.game_options["start_round"] == 3 and table.options.turn_seconds == 60

        listed = await ben.list_tables(STICH, open_only=True)
        assert [t.table_id for t in listed] == [table_id]
        others = await ben.list_tables(WILLI, open_only=False)
        assert not others

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
            update = await player.view(table_id)
            assert update.seat == seat and len(update.view["hand"]) == 3
        update = await dora.view(table_id)
        assert update.seat == -1 and update.view["hand"] is None and update.view["hands"] == [None] * 3
        first = await anna.view(table_id)
        assert first.seq == 1 and [e["type"] for e in first.events] == ["game_started"]
        payload = await last_lifecycle(settings, table_id, "started")
        assert payload["game_no"] == 1
        assert payload["players"] == [anna.player_id, cleo.player_id, ben.player_id]

        assert not await ben.list_tables(STICH, open_only=True)
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await anna.ready(table_id)
        assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION


async def test_leaving_a_waiting_table_frees_the_seat_and_the_last_one_closes_it(
        stack: dict[str, str]) -> None:
    async with logged_in(Endpoints.of(stack), "Anna", "Ben") as (anna, ben):
        table = await anna.create_table(WILLI, 3)
        await ben.join(table.table_id)
        await anna.ready(table.table_id)
        table = await anna.leave(table.table_id)
        assert table.seats[0].player_id == "" and table.seats[1].player_id == ben.player_id
        await ben.leave(table.table_id)
        with pytest.raises(grpc.aio.AioRpcError) as gone:
            await anna.get_table(table.table_id)
        assert gone.value.code() == grpc.StatusCode.NOT_FOUND


async def test_a_stich_series_leave_chat_newcomers_and_the_dealer_moving_on(
        stack: dict[str, str]) -> None:
    async with logged_in(Endpoints.of(stack), "Anna", "Ben", "Cleo", "Dora") as (anna, ben, cleo, dora):
        table = await anna.create_table(STICH, 3, options={"start_round": 18, "first_dealer": 2},
                                       turn_seconds=0)
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
            update = await anna.view(table_id)
            assert update.events == [{"type": "chat", "seat": 1, "text": "Viel Glück"}]

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
            after = (await anna.view(table_id)).view
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
            update = await cleo.view(table_id)
            assert update.seat == 1 and update.view["round"] == 18 and update.view["dealer"] == 1

            await anna.chat(table_id, "Noch eine!")
            await asyncio.sleep(0.2)
        changes = [item.change for item in news]
        for expected in ("chat", "ready", "game_started", "waiting", "left", "game_finished"):
            assert expected in changes, (expected, changes)
        chats = [(item.player_id, item.text) for item in news if item.change == "chat"]
        assert chats == [(anna.player_id, "Servus!"), (ben.player_id, "Viel Glück"),
                         (anna.player_id, "Noch eine!")]


async def test_a_bot_takes_over_a_willi_seat_and_its_player_reclaims_it(stack: dict[str, str]) -> None:
    async with logged_in(Endpoints.of(stack), "Anna", "Ben") as (anna, ben):
        table = await anna.create_table(WILLI, 4, turn_seconds=0)
        table_id = table.table_id
        await ben.join(table_id)
        await anna.add_bot(table_id)
        await anna.add_bot(table_id, "random")
        await anna.ready(table_id)
        assert (await ben.ready(table_id)).status == PLAYING

        table = await anna.leave(table_id)
        assert table.seats[0].player_id == anna.player_id and table.seats[0].bot
        update = await ben.view(table_id)
        assert [e["type"] for e in update.events] == ["seat_bot"]
        # The clock worker's bot discards for Anna's seat (and the two added bots discard too).
        async def bots_discarded() -> bool:
            view = (await ben.view(table_id)).view
            return bool(view["discarded"] == [True, False, True, True])
        await eventually(bots_discarded, what="the bots, Anna's stand-in included, to discard")

        rejoined = await anna.join(table_id)
        assert rejoined.seat == 0 and not rejoined.table.seats[0].bot
        update = await anna.view(table_id)
        assert [e["type"] for e in update.events] == ["seat_reclaimed"]

        view = await play_turns([ben], table_id, lambda v: v["phase"] == "play")
        assert view["to_act"] == [0]
        mine = (await anna.view(table_id)).view
        played = await anna.act(table_id, mine["legal"][0])
        assert played.seat == 0



@pytest.mark.parametrize(("game", "seats", "options"), [
    ("willi-wacker", 3, {"target": 50, "first_dealer": 1, "max_rounds": 3}),
    ("wie-waldi", 2, {"round_seconds": 30}),
])
async def test_every_game_gets_tables_with_its_options(stack: dict[str, str], game: str, seats: int,
                                                       options: dict[str, int]) -> None:
    async with logged_in(Endpoints.of(stack), "Anna") as (anna,):
        table = await anna.create_table(game, seats, options=options)
        assert dict(table.options.game_options.items()) == options
        for _ in range(seats - 1):
            table = await anna.add_bot(table.table_id)
        assert all(seat.bot for seat in table.seats[1:]) and table.status == WAITING
        table = await anna.ready(table.table_id)
        assert table.status == PLAYING
        update = await anna.view(table.table_id)  # from the engine, or the arbiter for Wie Waldi
        assert update.seat == 0 and update.view


async def test_willi_wacker_s_max_rounds_set_through_the_api_ends_the_game(stack: dict[str, str]) -> None:
    async with logged_in(Endpoints.of(stack), "Anna") as (anna,):
        table_id = await bot_table(anna, "willi-wacker", 3, turn_seconds=0, max_rounds=1, target=10_000)
        assert (await anna.get_table(table_id)).options.game_options["max_rounds"] == 1
        final = await asyncio.wait_for(play_seat(anna, table_id, bot_levels("willi-wacker")["heuristic"](),
                                                 random.Random(1)), 120)
    assert final.view["over"] and final.view["round"] == 1

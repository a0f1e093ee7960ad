"""Quick match across two lobby replicas: four Willi players get one table and a running game."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses

import grpc
import pytest
from test_lobby_support import Player, players

from services.runner import running_services
from shared.api.stammtisch.v1 import common_pb2, lobby_pb2
from shared.config import Settings

pytestmark = pytest.mark.integration

WILLI = common_pb2.GAME_WILLI


async def quick_match(player: Player, seats: int) -> list[lobby_pb2.QuickMatchResponse]:
    """Every response of one QuickMatch stream, until it ends."""
    call = player.lobby.QuickMatch(lobby_pb2.QuickMatchRequest(game=WILLI, seats=seats),
                                   metadata=player.auth)
    return [response async for response in call]


async def test_four_players_on_two_replicas_are_matched_into_one_running_game(
        stack: dict[str, str], settings: Settings) -> None:
    second = dataclasses.replace(settings, ports={**settings.ports, "lobby": 0})
    async with running_services(second, ["lobby"]) as (replica,), \
            players(stack, "Anna", "Ben") as here, \
            players(stack, "Cleo", "Dora", lobby_address=f"127.0.0.1:{replica.port}") as there:
        everyone = [*here, *there]
        streams = []
        for player in everyone:
            streams.append(asyncio.create_task(quick_match(player, 4)))
            await asyncio.sleep(0.05)
        results = await asyncio.wait_for(asyncio.gather(*streams), 15)

        finals = [responses[-1] for responses in results]
        assert all(final.HasField("table") for final in finals)
        assert len({final.table.table_id for final in finals}) == 1
        assert sorted(final.seat for final in finals) == [0, 1, 2, 3]
        assert [r.queued for r in results[0][:-1]] == [1, 2, 3]
        table = finals[0].table
        assert table.status == lobby_pb2.TABLE_STATUS_PLAYING
        assert [seat.player_id for seat in table.seats] == [p.player_id for p in everyone]
        assert [seat.name for seat in table.seats] == ["Anna", "Ben", "Cleo", "Dora"]
        for player, final in zip(everyone, finals, strict=True):
            update, view = await player.view(final.table.table_id)
            assert update.seat == final.seat and len(view["hands"][final.seat]) == 9


async def test_a_cancelled_stream_leaves_the_queue(stack: dict[str, str]) -> None:
    async with players(stack, "Anna", "Ben") as (anna, ben):
        stay = anna.lobby.QuickMatch(lobby_pb2.QuickMatchRequest(game=WILLI, seats=3),
                                     metadata=anna.auth)
        assert (await stay.read()).queued == 1
        gone = ben.lobby.QuickMatch(lobby_pb2.QuickMatchRequest(game=WILLI, seats=3),
                                    metadata=ben.auth)
        assert (await gone.read()).queued == 2
        assert (await stay.read()).queued == 2
        gone.cancel()
        assert (await asyncio.wait_for(stay.read(), 5)).queued == 1

        # Ben may queue again at once: his place was given up.
        again = ben.lobby.QuickMatch(lobby_pb2.QuickMatchRequest(game=WILLI, seats=3),
                                     metadata=ben.auth)
        assert (await again.read()).queued == 2
        with pytest.raises(grpc.aio.AioRpcError) as twice:
            await quick_match(ben, 3)
        assert twice.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert (await asyncio.wait_for(stay.read(), 5)).queued == 2
        for call in (stay, again):
            call.cancel()
            with contextlib.suppress(asyncio.CancelledError, grpc.aio.AioRpcError):
                await call.read()

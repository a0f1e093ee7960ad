"""Quick match across two lobby replicas: four Willi players get one table and a running game."""

from __future__ import annotations

import asyncio
import dataclasses

import grpc
import pytest

from services.host.runner import running_services
from shared.api.stammtisch.v1 import lobby_pb2
from shared.config import Settings
from shared.sdk.client import Endpoints, StammtischClient
from tests.support.stack import logged_in

pytestmark = pytest.mark.integration

WILLI = "willi"
#: Bounds a failing wait only; a loaded machine (other stacks, benches) may be slow to match.
WAIT_SECONDS = 60.0


async def quick_match(player: StammtischClient, seats: int) -> list[lobby_pb2.QuickMatchResponse]:
    """Every response of one QuickMatch stream, until it ends."""
    return [response async for response in player.match_queue(WILLI, seats)]


async def test_four_players_on_two_replicas_are_matched_into_one_running_game(
        stack: dict[str, str], settings: Settings) -> None:
    second = dataclasses.replace(settings, ports={**settings.ports, "lobby": 0})
    async with running_services(second, ["lobby"]) as (replica,), \
            logged_in(Endpoints.of(stack), "Anna", "Ben") as here, \
            logged_in(Endpoints.of(stack, lobby=f"127.0.0.1:{replica.port}"), "Cleo", "Dora") as there:
        everyone = [*here, *there]
        streams = [player.match_queue(WILLI, 4) for player in everyone]
        results: list[list[lobby_pb2.QuickMatchResponse]] = [[] for _ in everyone]
        # A stream's call starts at its first read: each player queues (and is told its place)
        # only once everyone before them has seen the previous one come, so the join order, and
        # the seat order, is the players' order however slowly a loaded machine delivers calls.
        for joined in range(len(everyone) - 1):
            for waiting in range(joined, -1, -1):  # the newcomer first: its read starts its call
                results[waiting].append(await asyncio.wait_for(anext(streams[waiting]), WAIT_SECONDS))

        async def rest(index: int) -> None:
            results[index].extend([response async for response in streams[index]])

        await asyncio.wait_for(asyncio.gather(*(rest(index) for index in range(len(everyone)))),
                               WAIT_SECONDS)

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
            update = await player.view(final.table.table_id)
            assert update.seat == final.seat and len(update.view["hands"][final.seat]) == 9


async def test_a_cancelled_stream_leaves_the_queue(stack: dict[str, str]) -> None:
    async with logged_in(Endpoints.of(stack), "Anna", "Ben") as (anna, ben):
        stay = anna.match_queue(WILLI, 3)
        assert (await anext(stay)).queued == 1
        gone = ben.match_queue(WILLI, 3)
        assert (await anext(gone)).queued == 2
        assert (await anext(stay)).queued == 2
        await gone.aclose()
        assert (await asyncio.wait_for(anext(stay), WAIT_SECONDS)).queued == 1

        # Ben may queue again at once: his place was given up.
        again = ben.match_queue(WILLI, 3)
        assert (await anext(again)).queued == 2
        with pytest.raises(grpc.aio.AioRpcError) as twice:
            await quick_match(ben, 3)
        assert twice.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert (await asyncio.wait_for(anext(stay), WAIT_SECONDS)).queued == 2
        for queue in (stay, again):
            await queue.aclose()

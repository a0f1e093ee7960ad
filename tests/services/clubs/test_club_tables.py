"""Members-only club tables, quick match among members, and the club leaderboard rated from the
games finished there; through the real API of a stack in this process."""

from __future__ import annotations

import asyncio
import dataclasses
import random
from collections.abc import AsyncIterator, Mapping

import grpc
import pytest

from shared.api.stammtisch.v1 import clubs_pb2 as K
from shared.config import Settings
from shared.games.registry import bot_levels
from shared.sdk.botplayer import play_seat
from shared.sdk.client import Endpoints, StammtischClient
from tests.support.clubs import refused, rpc, until

pytestmark = pytest.mark.integration
GAME = "mau-mau"


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return dataclasses.replace(settings, bot_delay_seconds=0.01)


@pytest.fixture
async def players(stack: Mapping[str, str]) -> AsyncIterator[list[StammtischClient]]:
    clients = [StammtischClient(Endpoints.of(stack)) for _ in range(3)]
    for client, name in zip(clients, ("Anna", "Bruno", "Carla"), strict=True):
        await client.login(name)
    yield clients
    for client in clients:
        await client.close()


async def test_members_meet_at_club_tables_and_the_club_rates_their_games(
        players: list[StammtischClient]) -> None:
    anna, bruno, carla = players
    club_id = (await rpc(anna, "CreateClub", name="Kartenfreunde",
                         join_policy=K.CLUB_JOIN_POLICY_PUBLIC)).club.club_id
    await rpc(bruno, "JoinClub", club_id=club_id)
    assert await refused(carla, "ClubQuickMatch", club_id=club_id, game=GAME, seats=2) \
        == grpc.StatusCode.PERMISSION_DENIED
    first = await rpc(anna, "ClubQuickMatch", club_id=club_id, game=GAME, seats=2)
    second = await rpc(bruno, "ClubQuickMatch", club_id=club_id, game=GAME, seats=2)
    table_id = first.table.table_id
    assert (first.seat, second.seat, second.table.table_id) == (0, 1, table_id)
    assert first.table.private
    listed = (await rpc(bruno, "ListClubTables", club_id=club_id)).tables
    assert [t.table_id for t in listed] == [table_id]
    assert table_id not in [t.table_id for t in await carla.list_tables(open_only=False)]
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await carla.join(table_id)
    assert caught.value.code() == grpc.StatusCode.FAILED_PRECONDITION

    await asyncio.gather(anna.ready(table_id), bruno.ready(table_id))
    bot = bot_levels(GAME)["heuristic"]
    await asyncio.wait_for(asyncio.gather(*(play_seat(c, table_id, bot(), random.Random(i))
                                            for i, c in enumerate((anna, bruno)))), 120)

    async def rated() -> bool:
        board = await rpc(anna, "GetClubLeaderboard", club_id=club_id, game=GAME)
        return len(board.lines) == 2
    await until(rated, 20)
    board = await rpc(anna, "GetClubLeaderboard", club_id=club_id, game=GAME)
    assert board.season == 1 and [line.games for line in board.lines] == [1, 1]
    assert {line.player_id for line in board.lines} == {anna.player_id, bruno.player_id}
    assert board.lines[0].rating >= board.lines[1].rating
    assert await refused(anna, "GetClubLeaderboard", club_id=club_id, game="nope") \
        == grpc.StatusCode.INVALID_ARGUMENT

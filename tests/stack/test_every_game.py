"""Every installed game through the whole stack, the way a new game must go: found in the catalogue,
matched by name, played by SDK clients to the end, its turn clock answering for a seat that lets a
decision pass, its result scored and rated, its archive replayed and verified from its seed.

Nothing here names a game: a game installed as its own package (tests/plugins/) is covered as is.
"""

from __future__ import annotations

import asyncio

import grpc
import pytest

from shared.api.stammtisch.v1 import history_pb2, scoring_pb2
from shared.archive.messages import archive_of
from shared.archive.verify import verify
from shared.config import Settings
from shared.games.catalog import CATALOGUE
from shared.infra.runtime import Runtime
from shared.sdk.client import StammtischClient
from tests.support.stack import bot_table, close_all, eventually, finish_game, quick_stack, stored_log

pytestmark = pytest.mark.integration

GAMES = sorted(CATALOGUE)


async def _archived(client: StammtischClient, table_id: str) -> history_pb2.GetReplayResponse | None:
    try:
        return await client.replay(table_id, 1)
    except grpc.aio.AioRpcError as err:
        if err.code() != grpc.StatusCode.UNAVAILABLE:  # not archived yet
            raise
        return None


async def _leaderboard(client: StammtischClient, game: str) -> list[scoring_pb2.LeaderboardEntry]:
    reply = await client.scoring.GetLeaderboard(scoring_pb2.GetLeaderboardRequest(game=game, limit=100),
                                                metadata=client.auth)
    return list(reply.entries)


@pytest.mark.parametrize("game", GAMES)
async def test_a_game_goes_from_quick_match_to_a_rated_result_and_a_verified_archive(
        settings: Settings, game: str) -> None:
    seats = CATALOGUE[game].min_seats
    async with quick_stack(settings) as ends:
        people = [StammtischClient(ends) for _ in range(seats)]
        try:
            for index, person in enumerate(people):
                await person.login(f"{game}-{index}")
            matched = await asyncio.gather(*(person.quick_match(game, seats) for person in people))
            table_id = matched[0][0].table_id
            assert {table.table_id for table, _ in matched} == {table_id}
            assert sorted(seat for _, seat in matched) == list(range(seats))
            assert matched[0][0].game == game

            await finish_game(people, table_id, game)

            replay = await eventually(lambda: _archived(people[0], table_id), 30.0, "the archive")
            archive = archive_of(replay)
            assert archive.game == game and verify(archive) == []

            ids = {person.player_id for person in people}
            board = await eventually(
                lambda: _all_rated(people[0], game, ids), 30.0, "every player rated")
        finally:
            await close_all(people)
    assert {entry.player_id for entry in board} >= ids
    assert all(entry.games == 1 and entry.sigma < 25 / 3 for entry in board if entry.player_id in ids)


async def _all_rated(client: StammtischClient, game: str,
                     ids: set[str]) -> list[scoring_pb2.LeaderboardEntry]:
    board = await _leaderboard(client, game)
    return board if ids <= {entry.player_id for entry in board} else []


@pytest.mark.parametrize("game", [name for name in GAMES if not CATALOGUE[name].simultaneous])
async def test_a_turn_clock_answers_for_a_person_who_lets_a_decision_pass(
        settings: Settings, runtime: Runtime, game: str) -> None:
    async with quick_stack(settings) as ends:
        me = StammtischClient(ends)
        try:
            await me.login(f"{game}-sleeper")
            table_id = await bot_table(me, game, CATALOGUE[game].min_seats, turn_seconds=1)

            async def timed_out() -> bool:
                log = await stored_log(runtime, table_id)
                return any(event == {"type": "timed_out", "seat": 0}
                           for record in log for event in record.events)

            await eventually(timed_out, 20.0, "the clock to answer for seat 0")
        finally:
            await me.close()

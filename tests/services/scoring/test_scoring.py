"""Scoring over real JetStream, Redis and gRPC: results become table results, boards and stats."""

from __future__ import annotations

import json
from typing import Any

import grpc
import pytest
from openskill.models import PlackettLuce

from shared.api.stammtisch.v1 import scoring_pb2
from shared.config import Settings
from shared.tables.announce import result_messages
from shared.tables.records import CommitRecord
from tests.support.scoring import (
    STICH,
    WILLI,
    Metadata,
    Stub,
    auth,
    board,
    consumed,
    finished,
    player,
    publisher,
    scoring,
    table_results,
)
from tests.support.stack import eventually

pytestmark = pytest.mark.integration


async def test_finished_games_show_up_as_table_results_leaderboard_and_stats(
        stack: dict[str, str], settings: Settings) -> None:
    people = [player(name) for name in ("anna", "bert", "cleo")]
    first, second = [30, 50, 10, 99], [60, 20, 20, 5]  # Willi with the card monster in seat 3
    async with publisher(settings) as announcer:
        await announcer.runtime.redis.hset(announcer.runtime.key("player", player("anna")), "name", "Anna")
        await announcer.publish_results(finished("t1", "willi", people, first, seq=40, game_no=1))
        await announcer.publish_results(finished("t1", "willi", people, second, seq=81, game_no=2))
        # Willi Stich: seat 1 was always a bot, dora left and a bot finished her seat 2.
        await announcer.publish_results(finished("t2", "willi-stich", [player("anna"), "", player("dora")],
                                                 [10, 30, 5], bots={"1": "random", "2": "heuristic"}))
    metadata = auth(settings, "anna")
    async with scoring(stack["scoring"]) as stub:
        results = await eventually(lambda: _results_of(stub, metadata, "t1", count=2))
        entries = await eventually(lambda: _all_counted(stub, metadata, WILLI, games=2))
        stich = await eventually(lambda: _all_counted(stub, metadata, STICH, games=1))
        own = (await stub.GetPlayerStats(scoring_pb2.GetPlayerStatsRequest(), metadata=metadata)).per_game

    assert [r.game_number for r in results] == [1, 2]
    assert results[0].table_id == "t1" and results[0].game == WILLI
    assert list(results[0].player_ids) == [*people, ""]
    assert list(results[0].scores) == first and list(results[0].winners) == [1]
    assert results[1].finished_at.seconds > 0

    model = PlackettLuce()
    ratings = [[model.rating()] for _ in people]
    for scores in (first, second):
        ratings = model.rate(ratings, scores=scores[:3])  # the monster's 99 and 5 left out
    by_player = {e.player_id: e for e in entries}
    assert sorted(by_player) == people, "the card monster is not ranked"
    assert [(by_player[p].mu, by_player[p].sigma) for p in people] == [
        pytest.approx((team[0].mu, team[0].sigma)) for team in ratings]
    assert [by_player[p].rating for p in people] == pytest.approx([team[0].ordinal() for team in ratings])
    assert [by_player[p].wins for p in people] == [1, 1, 0]
    assert [e.rating for e in entries] == sorted((e.rating for e in entries), reverse=True)
    assert (by_player[player("anna")].name, by_player[player("bert")].name) == ("Anna", "")

    assert sorted(e.player_id for e in stich) == [player("anna"), player("dora")], "bots are not ranked"
    anna, dora = model.rate([[model.rating()], [model.rating()]], scores=[10, 5])  # the bot's 30 left out
    assert {e.player_id: e.mu for e in stich} == {player("anna"): pytest.approx(anna[0].mu),
                                                  player("dora"): pytest.approx(dora[0].mu)}
    assert [(e.game, e.games) for e in own] == [(WILLI, 2), (STICH, 1)]
    assert own[0] == by_player[player("anna")]


async def test_leaderboard_sorts_by_rating_then_wins_and_honours_the_limit(
        stack: dict[str, str], settings: Settings) -> None:
    async with publisher(settings) as announcer:
        for table, players, scores in (("solo-win", [player("xena"), ""], [5, 1]),
                                       ("solo-loss", [player("yuri"), ""], [1, 5]),
                                       ("duel", [player("paul"), player("quin")], [9, 3])):
            bots = {str(seat): "random" for seat, p in enumerate(players) if not p}
            await announcer.publish_results(finished(table, "willi-stich", players, scores, bots=bots))
    metadata = auth(settings)
    async with scoring(stack["scoring"]) as stub:
        everyone = await eventually(lambda: _count(stub, metadata, STICH, players=4))
        top_two = await board(stub, metadata, STICH, limit=2)
        default = await board(stub, metadata, STICH, limit=0)
        other_game = await board(stub, metadata, WILLI)
    assert [e.player_id for e in everyone] == [player("paul"), player("xena"), player("yuri"), player("quin")]
    # Alone with bots: nobody to be ranked against, so the default rating (0) stays.
    assert [(e.rating, e.mu, e.wins) for e in everyone[1:3]] == [(pytest.approx(0.0), 25.0, 1),
                                                                 (pytest.approx(0.0), 25.0, 0)]
    assert [e.player_id for e in top_two] == [player("paul"), player("xena")]
    assert default == everyone
    assert other_game == []


@pytest.mark.parametrize(("method", "request_"), [
    ("GetLeaderboard", scoring_pb2.GetLeaderboardRequest()),
    ("GetLeaderboard", scoring_pb2.GetLeaderboardRequest(game="GAME_WILLI")),
    ("GetLeaderboard", scoring_pb2.GetLeaderboardRequest(game=WILLI, limit=-1)),
    ("GetLeaderboard", scoring_pb2.GetLeaderboardRequest(game=WILLI, limit=101)),
    ("GetTableResults", scoring_pb2.GetTableResultsRequest()),
    ("GetTableResults", scoring_pb2.GetTableResultsRequest(table_id="x" * 129)),
    ("GetPlayerStats", scoring_pb2.GetPlayerStatsRequest(player_id="x" * 129)),
    ("GetPlayerStats", scoring_pb2.GetPlayerStatsRequest(player_id="nobody")),
    ("GetPlayerStats", scoring_pb2.GetPlayerStatsRequest(player_id="a" * 31 + "\n")),
    ("GetTableResults", scoring_pb2.GetTableResultsRequest(table_id="t 1")),
    ("GetTableResults", scoring_pb2.GetTableResultsRequest(table_id="t1\r\n")),
])
async def test_bad_requests_are_invalid_arguments(stack: dict[str, str], settings: Settings,
                                                  method: str, request_: object) -> None:
    async with scoring(stack["scoring"]) as stub:
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await getattr(stub, method)(request_, metadata=auth(settings))
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert info.value.details()


async def test_unknown_tables_and_players_are_empty_and_a_token_is_required(
        stack: dict[str, str], settings: Settings) -> None:
    metadata = auth(settings)
    async with scoring(stack["scoring"]) as stub:
        assert await table_results(stub, metadata, "never-played") == []
        stats = await stub.GetPlayerStats(scoring_pb2.GetPlayerStatsRequest(player_id=player("nobody")),
                                          metadata=metadata)
        assert list(stats.per_game) == []
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await stub.GetLeaderboard(scoring_pb2.GetLeaderboardRequest(game=WILLI))
    assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED


async def test_malformed_results_are_dropped_without_blocking_the_next(
        stack: dict[str, str], settings: Settings) -> None:
    rejected = consumed("rejected")
    good = finished("fine", "willi-wacker", ["a", "b", "c"], [7, 9, 9])
    round_only = {**_payload(good), "event": {"type": "round_over", "scores": [1, 2, 3]}}
    async with publisher(settings) as announcer:
        subject = announcer.runtime.subject("results", "willi-wacker", "game")
        for number, body in enumerate((b"{not json", json.dumps(round_only).encode(),
                                       json.dumps({**_payload(good), "game": "skat"}).encode())):
            await announcer.runtime.js.publish(subject, body, headers={"Nats-Msg-Id": f"bad:{number}"})
        await announcer.publish_results(good)
    metadata = auth(settings)
    async with scoring(stack["scoring"]) as stub:
        entries = await eventually(lambda: _count(stub, metadata, "willi-wacker", players=3))
    assert consumed("rejected") - rejected == 3
    assert {e.player_id: e.wins for e in entries} == {"a": 0, "b": 1, "c": 1}


def _payload(record: CommitRecord) -> dict[str, Any]:
    """The game_over message body the publisher would send for this commit."""
    return result_messages(record)[-1][2]


async def _results_of(stub: Stub, metadata: Metadata, table_id: str,
                      count: int) -> list[scoring_pb2.GameResult]:
    results = await table_results(stub, metadata, table_id)
    return results if len(results) == count else []


async def _all_counted(stub: Stub, metadata: Metadata, game: str,
                       games: int) -> list[scoring_pb2.LeaderboardEntry]:
    entries = await board(stub, metadata, game)
    return entries if entries and all(e.games == games for e in entries) else []


async def _count(stub: Stub, metadata: Metadata, game: str,
                 players: int) -> list[scoring_pb2.LeaderboardEntry]:
    entries = await board(stub, metadata, game)
    return entries if len(entries) == players else []

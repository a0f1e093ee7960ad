"""Ratings over real Redis and the scoring service: old Elo data migrates on read; seeding ratings."""

from __future__ import annotations

import pytest
from openskill.models import PlackettLuce

from services.scoring.ratings import Rating
from services.scoring.store import MIGRATION_BATCH, ScoreStore
from shared.api.stammtisch.v1 import scoring_pb2
from shared.config import Settings
from shared.infra.runtime import Runtime
from tests.support.scoring import WILLI, Stub, auth, board, finished, player, publisher, scoring
from tests.support.stack import eventually

pytestmark = pytest.mark.integration

ANNA, BERT, CLEO, DORA = (player(name) for name in ("anna", "bert", "cleo", "dora"))


def key(runtime: Runtime, *parts: str) -> str:
    """A scoring key, spelled out here so that the Elo era's layout is what the test writes."""
    return runtime.key("scoring", "{scoring}", *parts)


async def store_elo_era_standings(runtime: Runtime,
                                  standings: tuple[tuple[str, int, int, float], ...] = (
                                      (ANNA, 12, 5, 1620.5), (BERT, 3, 0, 1410.0))) -> None:
    """Willi standings exactly as the Elo scoring stored them: rating in the hash, board by Elo."""
    for player_id, games, wins, rating in standings:
        await runtime.redis.hset(key(runtime, "stats", "willi", player_id),
                                 mapping={"games": games, "wins": wins, "rating": rating})
        elo_rank_key = round(rating * 1000) * 1_000_000 + wins
        await runtime.redis.zadd(key(runtime, "board", "willi"), {player_id: elo_rank_key})


async def test_elo_era_standings_start_at_the_default_rating_and_keep_their_counts(
        stack: dict[str, str], settings: Settings, runtime: Runtime) -> None:
    await store_elo_era_standings(runtime)
    metadata = auth(settings)
    async with scoring(stack["scoring"]) as stub:
        stats = await stub.GetPlayerStats(scoring_pb2.GetPlayerStatsRequest(player_id=ANNA),
                                          metadata=metadata)
        migrated = await board(stub, metadata, WILLI)
        async with publisher(settings) as announcer:  # anna's first openskill game
            await announcer.publish_results(finished("after-elo", "willi", [ANNA, CLEO, DORA],
                                                     [10, 40, 20, 7]))
        after_game = await eventually(lambda: _with_games(stub, settings, ANNA, 13))

    default = PlackettLuce().rating()
    assert [(e.games, e.wins, e.mu, e.sigma, e.rating) for e in stats.per_game] == [
        (12, 5, default.mu, default.sigma, pytest.approx(0.0))]
    assert [(e.player_id, e.games, e.wins, e.mu) for e in migrated] == [(ANNA, 12, 5, 25.0),
                                                                        (BERT, 3, 0, 25.0)]

    model = PlackettLuce()
    anna, cleo, dora = model.rate([[model.rating()] for _ in range(3)], scores=[10, 40, 20])
    by_player = {e.player_id: e for e in after_game}
    assert [e.player_id for e in after_game] == [CLEO, DORA, BERT, ANNA], "ranked by mu - 3 sigma"
    assert (by_player[ANNA].games, by_player[ANNA].wins) == (13, 5)
    assert (by_player[ANNA].mu, by_player[ANNA].sigma) == pytest.approx((anna[0].mu, anna[0].sigma))
    assert by_player[CLEO].rating == pytest.approx(cleo[0].ordinal())
    assert by_player[DORA].rating == pytest.approx(dora[0].ordinal())
    assert not await runtime.redis.exists(key(runtime, "board", "willi")), "the Elo board is gone"
    for player_id in (ANNA, BERT):
        assert not await runtime.redis.hexists(key(runtime, "stats", "willi", player_id), "rating")


async def test_a_big_elo_board_migrates_in_batches_on_the_first_query(runtime: Runtime) -> None:
    count = 2 * MIGRATION_BATCH + 17
    # Elo order is the reverse of the win order, so that a half-migrated board would show.
    old = tuple((player(f"p{n:03}"), 300, n, 1500.0 - n) for n in range(count))
    await store_elo_era_standings(runtime, old)
    store = ScoreStore(runtime)

    top = await store.leaderboard("willi", 100)

    most_wins_first = [(player_id, 300, wins) for player_id, _, wins, _ in old[::-1]]
    assert [(s.player_id, s.games, s.wins) for s in top] == most_wins_first[:100]
    assert all(s.rating == Rating() for s in top)
    assert not await runtime.redis.exists(key(runtime, "board", "willi"))
    assert await runtime.redis.zcard(key(runtime, "ranking", "willi")) == count


async def test_conservative_ratings_for_seeding(stack: dict[str, str], settings: Settings,
                                                runtime: Runtime) -> None:
    await store_elo_era_standings(runtime)
    async with publisher(settings) as announcer:
        await announcer.publish_results(finished("seed", "willi", [CLEO, DORA, ANNA], [30, 20, 10, 5]))
    async with scoring(stack["scoring"]) as stub:
        entries = await eventually(lambda: _with_games(stub, settings, CLEO, 1))
    store = ScoreStore(runtime)
    newcomer = player("erik")

    seeds = await store.conservative_ratings("willi", [CLEO, DORA, ANNA, BERT, newcomer])
    by_player = {e.player_id: e.rating for e in entries}
    assert seeds == {CLEO: pytest.approx(by_player[CLEO]), DORA: pytest.approx(by_player[DORA]),
                     ANNA: pytest.approx(by_player[ANNA]), BERT: pytest.approx(0.0),
                     newcomer: pytest.approx(0.0)}
    assert seeds[CLEO] > seeds[DORA] > seeds[ANNA]
    assert await store.conservative_ratings("willi-stich", [CLEO]) == {CLEO: pytest.approx(0.0)}


async def _with_games(stub: Stub, settings: Settings, player_id: str,
                      games: int) -> list[scoring_pb2.LeaderboardEntry]:
    """The Willi board once ``player_id`` has ``games`` games on it, else empty."""
    entries = await board(stub, auth(settings), WILLI)
    return entries if any(e.player_id == player_id and e.games == games for e in entries) else []

"""Scoring counts every finished game exactly once: duplicates, redeliveries, restarts, replicas."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import random
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from nats.js import JetStreamContext
from nats.js.api import AckPolicy, ConsumerConfig

from services.host.runner import running_services
from services.scoring.consumer import DURABLE, ScoringResults
from services.scoring.finished import FinishedGame
from services.scoring.ratings import Rating
from services.scoring.store import ScoreStore
from shared.api.stammtisch.v1 import scoring_pb2
from shared.config import Settings
from shared.infra.runtime import Runtime, results_stream
from shared.tables.announce import Announcer, result_messages
from shared.tables.records import CommitRecord
from tests.support.scoring import (
    STICH,
    WILLI,
    Stub,
    auth,
    board,
    consumed,
    finished,
    player,
    publisher,
    scoring,
)
from tests.support.stack import eventually

pytestmark = pytest.mark.integration

POOL = [player(name) for name in ("ada", "ben", "cai", "dev", "eli", "fay")]
#: Bounds a failing wait only: a result a stopped replica had received but not acknowledged comes
#: back after the consumer's ack wait (ACK_WAIT_SECONDS), and a loaded machine adds to that.
SETTLE_SECONDS = 120.0


@asynccontextmanager
async def scoring_alone(settings: Settings) -> AsyncIterator[str]:
    """One scoring replica (its own connections, like its own process); yields its address."""
    async with running_services(settings, ["scoring"]) as running:
        yield f"127.0.0.1:{running[0].port}"


def stream_name(settings: Settings) -> str:
    """The results stream of this test's deployment."""
    name = results_stream(settings).name
    assert name is not None
    return name


def league(games: int, seed: int = 7) -> list[CommitRecord]:
    """Willi Stich games of three people from a pool of six, one table each."""
    rng = random.Random(seed)
    return [finished(f"league-{n}", "willi-stich", rng.sample(POOL, 3),
                     [rng.randrange(0, 60, 10) for _ in range(3)]) for n in range(games)]


def expected_records(records: list[CommitRecord]) -> dict[str, tuple[int, int]]:
    """Player -> (games, wins) once every record is counted exactly once."""
    games: Counter[str] = Counter()
    wins: Counter[str] = Counter()
    for record in records:
        game_over = record.events[-1]
        for seat, player_id in enumerate(record.meta.players):
            games[player_id] += 1
            wins[player_id] += seat in game_over["winners"]
    return {player: (games[player], wins[player]) for player in games}


async def records_on_board(stub: Stub, settings: Settings) -> dict[str, tuple[int, int]]:
    """Player -> (games, wins) as the Willi Stich leaderboard shows them."""
    return {e.player_id: (e.games, e.wins) for e in await board(stub, auth(settings), STICH)}


async def publish_all(announcer: Announcer, records: list[CommitRecord]) -> None:
    for record in records:
        await announcer.publish_results(record)


async def settled(js: JetStreamContext, settings: Settings) -> bool:
    """Nothing left for the durable consumer: all delivered and acknowledged."""
    info = await js.consumer_info(stream_name(settings), DURABLE)
    return info.num_pending == 0 and info.num_ack_pending == 0


async def test_a_result_published_again_counts_once(settings: Settings) -> None:
    record = finished("twice", "willi", [player("ann"), player("bob"), player("cid")], [10, 20, 30, 5])
    duplicates = consumed("duplicate")
    async with scoring_alone(settings) as address, publisher(settings) as announcer:
        js, stream = announcer.runtime.js, stream_name(settings)
        game_subject = announcer.runtime.subject("results", "willi", "game")
        await announcer.publish_results(record)
        await announcer.publish_results(record)  # same Nats-Msg-Id: JetStream drops it
        first = await js.get_last_msg(stream, game_subject)
        assert (await js.stream_info(stream)).state.messages == 2, "one round, one game"

        # A relay that re-publishes after the duplicate window gets the message stored twice.
        await js.update_stream(dataclasses.replace(results_stream(settings), duplicate_window=0.1))

        async def stored_again() -> bool:
            await asyncio.sleep(0.2)  # the server forgets old ids lazily: try until it has
            await announcer.publish_results(record)
            return (await js.get_last_msg(stream, game_subject)).seq != first.seq

        await eventually(stored_again, SETTLE_SECONDS, "the result stored a second time")
        await eventually(lambda: consumed("duplicate") - duplicates == 1, SETTLE_SECONDS,
                         "the second copy counted as a duplicate")
        async with scoring(address) as stub:
            entries = await board(stub, auth(settings), WILLI)
    assert {(e.player_id, e.games, e.wins) for e in entries} == {(player("ann"), 1, 0), (player("bob"), 1, 0),
                                                                  (player("cid"), 1, 1)}


async def test_a_restarted_scoring_goes_on_without_loss_or_double_counting(settings: Settings) -> None:
    records = league(150)
    recorded = consumed("recorded")
    async with publisher(settings) as announcer:
        await publish_all(announcer, records[:120])
        async with scoring_alone(settings):
            await eventually(lambda: consumed("recorded") > recorded, SETTLE_SECONDS,
                             "a first result recorded")  # then stop it mid-stream
        recorded_before_stop = consumed("recorded") - recorded
        await publish_all(announcer, records[120:])  # while no scoring runs
        async with scoring_alone(settings) as address, scoring(address) as stub:
            await eventually(lambda: settled(announcer.runtime.js, settings), SETTLE_SECONDS,
                             "every result acknowledged after the restart")
            after_restart = await board(stub, auth(settings), STICH)
        # Lost consumer state (e.g. deleted by hand): every result comes again, nothing changes.
        await announcer.runtime.js.delete_consumer(stream_name(settings), DURABLE)
        duplicates, recorded_before_replay = consumed("duplicate"), consumed("recorded")
        async with scoring_alone(settings) as address, scoring(address) as stub:
            # Every result comes again (one that outlives the ack wait on a loaded machine
            # comes twice, a duplicate again), and none is recorded a second time.
            await eventually(lambda: consumed("duplicate") - duplicates >= len(records), SETTLE_SECONDS,
                             "every result seen again as a duplicate")
            await eventually(lambda: settled(announcer.runtime.js, settings), SETTLE_SECONDS,
                             "the replay acknowledged")
            after_replay = await board(stub, auth(settings), STICH)
        assert consumed("recorded") == recorded_before_replay, "a replayed result was recorded again"
    print(f"recorded before the stop: {recorded_before_stop:.0f} of 120")
    assert {e.player_id: (e.games, e.wins) for e in after_restart} == expected_records(records)
    assert after_replay == after_restart, "a replay changes no count and no rating"


async def test_two_replicas_share_the_work_and_count_every_game_once(settings: Settings) -> None:
    records = league(90, seed=11)
    async with scoring_alone(settings) as address, scoring_alone(settings), \
            publisher(settings) as announcer:
        js = announcer.runtime.js
        info = await js.consumer_info(stream_name(settings), DURABLE)
        assert info.push_bound and info.config.deliver_group == DURABLE, "both replicas in one group"
        await publish_all(announcer, records)
        async with scoring(address) as stub:
            await eventually(lambda: settled(js, settings), SETTLE_SECONDS, "every result acknowledged")
            on_board = await records_on_board(stub, settings)
            stats = await stub.GetPlayerStats(scoring_pb2.GetPlayerStatsRequest(player_id=POOL[0]),
                                              metadata=auth(settings))
            sigmas = [e.sigma for e in await board(stub, auth(settings), STICH)]
    assert on_board == expected_records(records)
    assert [(e.games, e.wins) for e in stats.per_game] == [on_board[POOL[0]]]
    assert len(sigmas) == len(POOL) and max(sigmas) < Rating().sigma, "everyone's games were rated"


async def test_games_of_the_same_players_recorded_at_once_lose_no_update(runtime: Runtime) -> None:
    """Ten games of the same three people recorded concurrently by two stores: each standing's
    compare-and-set retries on the newer standings, so every game counts, and once."""
    people = [player(name) for name in ("anna", "bert", "cleo")]
    stores = [ScoreStore(runtime), ScoreStore(runtime)]
    games = []
    for index in range(10):
        record = finished(f"t{index}", "willi", people, [10 + index, 20, 30 - index, 0])
        (_kind, msg_id, payload), = [m for m in result_messages(record) if m[0] == "game"]
        games.append(FinishedGame.from_message(msg_id, json.dumps(payload).encode()))
    twice = [*games, *games]
    recorded = await asyncio.gather(*(stores[index % 2].record(game) for index, game in enumerate(twice)))
    assert sorted(recorded) == [False] * 10 + [True] * 10
    standings = await stores[0]._standings([("willi", person) for person in people])
    assert [standing.games for standing in standings] == [10, 10, 10]


class _FailingOnce(ScoreStore):
    """A score store whose first attempt at each result fails (Redis away for a moment)."""

    def __init__(self, runtime: Runtime) -> None:
        super().__init__(runtime)
        self.failed: set[str] = set()

    async def record(self, game: FinishedGame) -> bool:
        if game.result_id not in self.failed:
            self.failed.add(game.result_id)
            raise ConnectionError("redis away")
        return await super().record(game)


async def test_a_result_that_fails_to_record_comes_again_without_holding_up_the_rest(
        settings: Settings) -> None:
    """Each result fails once: it is not acknowledged, it is retried and recorded, and so is
    every result behind it."""
    records = league(5, seed=3)
    failed, recorded = consumed("failed"), consumed("recorded")
    async with publisher(settings) as announcer:
        store = _FailingOnce(announcer.runtime)
        results = ScoringResults(announcer.runtime, store)
        await results.start()
        try:
            await publish_all(announcer, records)
            await eventually(lambda: settled(announcer.runtime.js, settings), SETTLE_SECONDS,
                             "every result acknowledged")
        finally:
            await results.stop()
    assert consumed("failed") - failed == len(records)
    assert consumed("recorded") - recorded == len(records)


async def test_scoring_starts_beside_a_pull_consumer_named_scoring(settings: Settings) -> None:
    """A deployment may still hold a pull consumer ``scoring`` on the results stream (a push
    consumer cannot bind to it): scoring's own durable has another name and records as usual."""
    record = finished("beside", "willi", [player("gus"), player("hal"), player("ida")], [30, 20, 10, 0])
    recorded = consumed("recorded")
    async with publisher(settings) as announcer:
        await announcer.runtime.js.add_consumer(stream_name(settings), ConsumerConfig(
            durable_name="scoring", ack_policy=AckPolicy.EXPLICIT))
        async with scoring_alone(settings):
            await announcer.publish_results(record)
            await eventually(lambda: consumed("recorded") > recorded, SETTLE_SECONDS, "the result recorded")

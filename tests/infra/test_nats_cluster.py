"""The services on a real 3-node JetStream cluster with R3 streams; one node dies mid-game.

Whole games of every game run back to back through the real API (SDK bot
clients, gRPC, the four services in this process), with NATS_URL listing the
three servers. A few seconds in, the node leading the results stream is
killed with SIGKILL; it comes back a few seconds later and the next leader
is killed. Play must go on, and every result the tables committed
must be on the RESULTS stream exactly once (by Nats-Msg-Id), and recorded by
scoring exactly once per game.
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
import time
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

from shared.config import Settings
from shared.games.registry import bot_levels
from shared.infra.local_nats_cluster import LocalCluster, local_cluster
from shared.infra.runtime import Runtime, results_stream, table_events_stream
from shared.sdk.botplayer import play_seat
from shared.sdk.client import Endpoints
from tests.support.stack import delivered_results, logged_in, seated_table, stored_log

pytestmark = pytest.mark.integration

#: Every game, with options that keep a game to seconds.
GAMES: dict[str, dict[str, int]] = {
    "willi": {}, "willi-stich": {"start_round": 15}, "willi-wacker": {"target": 60},
    "wie-waldi": {"round_seconds": 10}}
SEATS = 4
#: Nodes killed one after the other (each restarted before the next kill), and the
#: seconds of play before and after each kill.
KILLS, PLAY_SECONDS = 2, 3.0


@dataclass
class Played:
    """One finished table and when its game ran."""

    table_id: str
    started: float
    ended: float


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[LocalCluster]:
    with local_cluster(tmp_path / "nats") as running:
        yield running


@pytest.fixture
def settings(settings: Settings, cluster: LocalCluster) -> Settings:
    """The session's Redis; NATS is the cluster (every server listed); streams with 3 replicas."""
    return dataclasses.replace(settings, nats_url=cluster.url, stream_replicas=3,
                               bot_delay_seconds=0.01)


async def _one_game(endpoints: Endpoints, game: str, options: Mapping[str, int]) -> str:
    """Four fresh clients sit at a new table and play it to the end; returns its id."""
    async with logged_in(endpoints, *(f"{game}-{index}" for index in range(SEATS))) as clients:
        table_id = await seated_table(clients, game, **options)
        bot = bot_levels(game)["heuristic"]
        await asyncio.wait_for(asyncio.gather(*(
            play_seat(client, table_id, bot(), random.Random(seat))
            for seat, client in enumerate(clients))), 120)
        return table_id


async def _games_until(stop: asyncio.Event, endpoints: Endpoints, game: str,
                       played: list[Played]) -> None:
    while not stop.is_set():
        started = time.monotonic()
        table_id = await _one_game(endpoints, game, GAMES[game])
        played.append(Played(table_id, started, time.monotonic()))


async def test_games_survive_a_killed_nats_node_without_losing_or_doubling_a_result(
        cluster: LocalCluster, settings: Settings, stack: dict[str, str], runtime: Runtime) -> None:
    for stream in (results_stream(settings), table_events_stream(settings)):
        info = await runtime.js.stream_info(str(stream.name))
        assert info.config.num_replicas == 3 and info.cluster is not None
        assert len(info.cluster.replicas or []) == 2, "a leader and two followers"
    endpoints = Endpoints.of(stack)
    stop = asyncio.Event()
    played: list[Played] = []
    lanes = [asyncio.create_task(_games_until(stop, endpoints, game, played)) for game in GAMES]
    kills: list[tuple[str, float]] = []
    for _ in range(KILLS):
        await asyncio.sleep(PLAY_SECONDS)
        leader = cluster.node(cluster.stream_leader(str(results_stream(settings).name)))
        cluster.kill(leader)
        kills.append((leader.name, time.monotonic()))
        await asyncio.sleep(PLAY_SECONDS)
        await asyncio.to_thread(cluster.start, leader)  # back on its old store; it catches up
        await asyncio.to_thread(cluster.wait_ready)
    stop.set()
    await asyncio.wait_for(asyncio.gather(*lanes), 180)

    for game in played:
        assert (await stored_log(runtime, game.table_id))[-1].game().over
    # The relay re-publishes what the dead node did not acknowledge.
    delivery = await delivered_results(runtime, [game.table_id for game in played])
    lost, doubled, recorded = delivery.lost, delivery.doubled, delivery.recorded
    across = [sum(1 for game in played if game.started < at < game.ended) for _name, at in kills]
    print(f"\nNATS cluster: {len(played)} games played, {len(kills)} node kills survived "
          f"({', '.join(name for name, _ in kills)}; games in progress at each: {across}), "
          f"{len(delivery.expected)} results, lost {len(lost)}, doubled {len(doubled)}, "
          f"scoring records per game {sorted(Counter(recorded).items())}")
    assert all(across), "a node died while no game was in progress"
    assert any(game.started > kills[-1][1] for game in played), "no game started after the kills"
    assert not lost and not doubled
    assert set(delivery.on_stream) == delivery.expected
    assert recorded == [1] * len(played)

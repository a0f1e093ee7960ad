"""The services on a real Redis Cluster (3 masters, a replica each); masters die mid-game.

``STAMMTISCH_REDIS_CLUSTER=1`` with REDIS_URL naming one seed node. Whole games
of every game run through the real API (SDK clients, gRPC, the four services
in this process): people's tables played move by move, each acknowledged move
written down, and tables of server bots that the turn clocks play. A few
seconds in, a master is killed with SIGKILL; its replica takes over, an empty
node in its place becomes the new master's replica, and the next master is
killed. Play must go on,
no acknowledged move may be missing from its table's log, and every result
must be on the RESULTS stream and recorded by scoring exactly once.

The first tests check, without failovers, that each piece that writes several
keys keeps to one slot on the cluster client (a cross-slot script fails there).
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import Any, TypeVar

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from prometheus_client import REGISTRY

from services.accounts.devices import Accounts
from services.accounts.sessions import Sessions
from shared.config import Settings
from shared.games.registry import bot_levels, engine_class
from shared.infra.local_redis_cluster import LocalRedisCluster, local_redis_cluster
from shared.infra.runtime import Runtime
from shared.rpc.errors import ServiceError
from shared.sdk.client import Endpoints, RefusedAction, StammtischClient
from shared.tables.announce import Announcer
from shared.tables.clocks import deadline_policy
from shared.tables.records import TableMeta
from shared.tables.store import Change, TableStore
from tests.support.stack import (
    bot_table,
    close_all,
    delivered_results,
    eventually,
    finish_game,
    log_in,
    logged_in,
    outbox_size,
    seated_table,
    stored_log,
)

pytestmark = pytest.mark.integration

T = TypeVar("T")

#: Every game, with options that keep a game to seconds.
GAMES: dict[str, dict[str, int]] = {
    "willi": {}, "willi-stich": {"start_round": 15}, "willi-wacker": {"target": 60},
    "wie-waldi": {"round_seconds": 10}}
SEATS = 4
#: Masters killed one after the other (each back as a replica before the next kill), and the
#: seconds of play before each kill.
KILLS, PLAY_SECONDS = 2, 3.0
#: How long one step of a player may keep failing with UNAVAILABLE (a failover takes ~2 s).
PATIENCE_SECONDS = 30.0


@pytest.fixture(scope="module")
def redis_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalRedisCluster]:
    with local_redis_cluster(tmp_path_factory.mktemp("redis-cluster"), masters=3, replicas=1) as cluster:
        yield cluster


@pytest.fixture
def settings(settings: Settings, redis_cluster: LocalRedisCluster) -> Settings:
    """The session's NATS; Redis is the cluster, reached through one seed node."""
    return dataclasses.replace(settings, redis_url=redis_cluster.url, redis_cluster=True,
                               bot_delay_seconds=0.01)


#: Steps of the players that met UNAVAILABLE (after the SDK's own retries) and were tried again.
RETRIED: Counter[str] = Counter()


async def _patiently(step: Callable[[], Awaitable[T]]) -> T:
    """Run ``step`` until it stops failing with UNAVAILABLE (a master failing over)."""
    deadline = time.monotonic() + PATIENCE_SECONDS
    while True:
        try:
            return await step()
        except grpc.aio.AioRpcError as err:
            if err.code() != grpc.StatusCode.UNAVAILABLE or time.monotonic() > deadline:
                raise
            RETRIED["steps"] += 1
            await asyncio.sleep(0.2)


async def _serving(stack: dict[str, str]) -> bool:
    """Every service of the stack reports SERVING on the standard health service."""
    for address in stack.values():
        async with grpc.aio.insecure_channel(address) as channel:
            reply = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(),
                                                                    timeout=5)
        if reply.status != health_pb2.HealthCheckResponse.SERVING:
            return False
    return True


def _unreplicated() -> float:
    """Writes this process acknowledged without a replica's copy, so far."""
    return REGISTRY.get_sample_value("stammtisch_redis_unreplicated_writes_total") or 0.0


@asynccontextmanager
async def _logged_in(endpoints: Endpoints, *names: str) -> AsyncIterator[list[StammtischClient]]:
    """Logged-in clients (a login during a failover is tried again), closed after the block."""
    clients = await _patiently(lambda: log_in(endpoints, *names))
    try:
        yield clients
    finally:
        await close_all(clients)


@dataclass
class Played:
    """One table and its game: the moves its people had acknowledged, and when it ran."""

    table_id: str
    started: float
    by_bots: bool = False
    ended: float = 0.0
    acknowledged: list[tuple[int, int, dict[str, Any]]] = field(default_factory=list)


async def _move(clients: list[StammtischClient], table_id: str, bot: Any, rng: random.Random,
                played: Played) -> bool:
    """The first seat with a legal move makes one; False once the game is over (or closed)."""
    for seat, client in enumerate(clients):
        current = await client.view(table_id)
        if current.finished:
            return False
        view = current.view
        if view["legal"]:
            action = bot.choose(view, rng)
            try:
                update = await client.act(table_id, action)
            except RefusedAction:  # a clock (Wie Waldi's round time) answered first
                return True
            played.acknowledged.append((update.seq, seat, action))
            return True
    await asyncio.sleep(0.05)  # nobody owes a move: a round's clock runs
    return True


async def _people_game(endpoints: Endpoints, game: str, options: Mapping[str, int], rng: random.Random,
                       played: list[Played]) -> None:
    """Four people play a new table to its end, writing down each acknowledged move."""
    async with _logged_in(endpoints, *(f"{game}-{index}" for index in range(SEATS))) as clients:
        table_id = await _patiently(lambda: seated_table(clients, game, **options))
        await _patiently(lambda: clients[0].wait_for_game(table_id))
        this = Played(table_id, time.monotonic())
        played.append(this)
        bot = bot_levels(game)["heuristic"]()
        while await _patiently(lambda: _move(clients, table_id, bot, rng, this)):
            pass
        this.ended = time.monotonic()


async def _bots_game(endpoints: Endpoints, game: str, played: list[Played]) -> None:
    """One person and three server bots (moved by the turn clocks) play a table to its end."""
    async with _logged_in(endpoints, f"{game}-host") as (client,):
        table_id = await _patiently(lambda: bot_table(client, game, SEATS, **GAMES[game]))
        this = Played(table_id, time.monotonic(), by_bots=True)
        played.append(this)
        await _patiently(lambda: finish_game([client], table_id, game))
        this.ended = time.monotonic()


async def _lane(stop: asyncio.Event, play: Callable[[], Awaitable[None]]) -> None:
    while not stop.is_set():
        await play()


async def test_each_multi_key_write_keeps_to_one_slot(runtime: Runtime, settings: Settings) -> None:
    """A commit with results, the relay of a stale outbox entry and the live count over every
    shard; device accounts and refresh tokens. (The lobby, quick match, history and scoring
    write through the games of the next test.)"""
    assert runtime.shards.count == 16
    store = TableStore(runtime, deadline_policy(0.0, 600.0))
    meta = TableMeta("rc1", "willi", ["a", "b", "c", "d"], seed=1)
    game = engine_class("willi").new(4, {}, 1)
    events: list[dict[str, Any]] = [{"type": "round_over", "round": 1},
                                    {"type": "game_over", "winners": [0], "scores": [1, 0, 0, 0]}]
    record, _ = await store.commit("rc1", lambda _h: Change(game, events, meta), allow_new=True)
    assert record is not None
    shard = store.shard_of("rc1")
    await runtime.redis.zadd(store.outbox_key(shard), {"rc1|1": (time.time() - 60) * 1000})
    assert await Announcer(runtime, store).relay_once() == 1
    assert await outbox_size(runtime) == 0
    assert await store.live_tables("willi") == 1  # its engine's game runs on

    accounts, sessions = Accounts(runtime), Sessions(runtime, ttl_seconds=60)
    login = await accounts.login("device-1", "secret-1", "Anna")
    assert login.created and await accounts.is_device(login.player_id)
    assert await accounts.login("device-1", "secret-1", "Anna") == dataclasses.replace(login, created=False)
    first = await sessions.open(login.player_id)
    second = await sessions.rotate(first.token)
    await sessions.revoke(second.token, everywhere=True)
    with pytest.raises(ServiceError):
        await sessions.rotate(second.token)
    await accounts.delete(login.player_id)
    assert not await accounts.exists(login.player_id)


async def test_a_quick_match_seats_a_full_group_on_the_cluster(stack: dict[str, str]) -> None:
    async with logged_in(Endpoints.of(stack), *(f"q{index}" for index in range(SEATS))) as clients:
        seated = await asyncio.gather(*(client.quick_match("willi", SEATS) for client in clients))
    assert len({table.table_id for table, _seat in seated}) == 1
    assert sorted(seat for _table, seat in seated) == list(range(SEATS))


async def test_games_go_on_through_master_failovers_losing_no_move_and_no_result(
        redis_cluster: LocalRedisCluster, settings: Settings, stack: dict[str, str],
        runtime: Runtime) -> None:
    endpoints = Endpoints.of(stack)
    stop = asyncio.Event()
    played: list[Played] = []
    rng = random.Random(13)
    unreplicated_before, RETRIED["steps"] = _unreplicated(), 0
    lanes = [asyncio.create_task(_lane(stop, partial(_people_game, endpoints, game, GAMES[game], rng,
                                                     played))) for game in GAMES]
    lanes.append(asyncio.create_task(_lane(stop, partial(_bots_game, endpoints, "willi", played))))
    kills: list[tuple[str, float]] = []
    for _ in range(KILLS):
        await asyncio.sleep(PLAY_SECONDS)
        masters = redis_cluster.masters()  # the seed node first, while it is a master
        master = redis_cluster.nodes[0] if redis_cluster.nodes[0] in masters else masters[0]
        redis_cluster.kill(master)
        kills.append((master.address, time.monotonic()))
        await asyncio.to_thread(redis_cluster.wait_failed_over, master)  # its replica took over
        await eventually(lambda: _serving(stack), what="every service healthy without the dead node")
        await asyncio.to_thread(redis_cluster.replace, master)  # a fresh node, the new master's replica
    await asyncio.sleep(PLAY_SECONDS)
    stop.set()
    await asyncio.wait_for(asyncio.gather(*lanes), 240)

    moves = lost_moves = 0
    for game in played:
        log = await stored_log(runtime, game.table_id)
        assert log[-1].game().over, f"{game.table_id} did not end"
        assert [r.seq for r in log] == list(range(log[0].seq, log[-1].seq + 1))
        by_seq = {record.seq: record for record in log}
        for seq, seat, action in game.acknowledged:
            moves += 1
            found = by_seq.get(seq)
            lost_moves += found is None or (found.actor, found.action) != (seat, action)
    delivery = await delivered_results(runtime, [game.table_id for game in played])
    lost, doubled, recorded = delivery.lost, delivery.doubled, delivery.recorded
    across = [sum(1 for game in played if game.started < at < game.ended) for _name, at in kills]
    print(f"\nRedis Cluster (3 masters + 1 replica each): {len(played)} games played "
          f"({sum(1 for g in played if g.by_bots)} by server bots), {len(kills)} master "
          f"failovers survived (games in progress at each: {across}), {moves} acknowledged moves, "
          f"lost {lost_moves}; {len(delivery.expected)} results, lost {len(lost)}, doubled {len(doubled)}; "
          f"scoring records per game {sorted(Counter(recorded).items())}; player steps retried "
          f"after UNAVAILABLE {RETRIED['steps']}, writes acknowledged without a replica's copy "
          f"(a master without replica, between a failover and its replacement) "
          f"{_unreplicated() - unreplicated_before:.0f}")
    assert all(across), "a master died while no game was in progress"
    assert any(game.started > kills[-1][1] for game in played), "no game started after the kills"
    assert lost_moves == 0
    assert not lost and not doubled
    assert set(delivery.on_stream) == delivery.expected
    assert recorded == [1] * len(played)

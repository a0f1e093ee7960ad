"""Redis and NATS that go away and come back: connections heal, health follows, commits answer.

Each test starts its own redis-server and nats-server (free ports, own data
folders), because it kills them; the services run in this process against them.
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from services.host.runner import Running, running_services
from services.play.servicer import PlayService
from shared.config import SERVICE_NAMES, Settings
from shared.infra.local import LocalServer, server_pair
from shared.infra.runtime import open_runtime
from shared.sdk.client import Endpoints
from shared.tables.announce import live_subject
from tests.support.scoring import auth, finished, scoring, table_results
from tests.support.stack import close_all, eventually, outbox_size, play_one, seated_players

pytestmark = pytest.mark.integration
SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


@dataclass
class OwnServers:
    """A Redis and a NATS of one test, which it may kill and restart on the same port and data."""

    redis: LocalServer
    nats: LocalServer


@pytest.fixture
def own(tmp_path: Path) -> Iterator[OwnServers]:
    with server_pair(tmp_path) as (redis, nats):
        yield OwnServers(redis, nats)


@pytest.fixture
def own_settings(settings: Settings, own: OwnServers) -> Settings:
    return dataclasses.replace(settings, redis_url=own.redis.url, nats_url=own.nats.url)


@pytest.fixture
async def services(own_settings: Settings) -> AsyncIterator[dict[str, Running]]:
    async with running_services(own_settings, SERVICE_NAMES) as running:
        yield {item.service.name: item for item in running}


def endpoints(services: dict[str, Running]) -> Endpoints:
    return Endpoints(*(f"127.0.0.1:{services[name].port}" for name in SERVICE_NAMES))


async def health(services: dict[str, Running]) -> set[int]:
    """The statuses the four services report over gRPC right now."""
    statuses = set()
    for item in services.values():
        async with grpc.aio.insecure_channel(f"127.0.0.1:{item.port}") as channel:
            reply = await health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service=item.service.full_name), timeout=5)
        statuses.add(int(reply.status))
    return statuses


async def test_health_follows_redis_and_nats(own: OwnServers, services: dict[str, Running]) -> None:
    assert await health(services) == {SERVING}
    own.redis.kill()
    await eventually(lambda: _is(services, {NOT_SERVING}))
    own.redis.restart()
    await eventually(lambda: _is(services, {SERVING}))
    own.nats.kill()
    await eventually(lambda: _is(services, {NOT_SERVING}))
    own.nats.restart()
    await eventually(lambda: _is(services, {SERVING}), timeout=15)


async def _is(services: dict[str, Running], expected: set[int]) -> bool:
    return await health(services) == expected


async def test_a_nats_restart_restores_live_news_results_and_scoring(
        own: OwnServers, own_settings: Settings, services: dict[str, Running]) -> None:
    # Round 1 of Willi Stich: one card each.
    clients, table_id = await seated_players(endpoints(services), "willi-stich", 3, turn_seconds=0)
    engine = services["engine"].service
    assert isinstance(engine, PlayService)
    try:
        updates = clients[0].updates(table_id, 0)
        first = await anext(updates)  # the stream's live subscription now exists
        feed = engine.play.feeds._subs[table_id]
        own.nats.kill()
        own.nats.restart()
        await eventually(lambda: engine.runtime.nats.is_connected and engine.runtime.live.is_connected,
                         timeout=15)

        delivered = feed.delivered
        seq, *_ = await play_one(clients, table_id, "willi-stich", random.Random(1))
        # This process's own commits reach its streams directly; news from elsewhere (here: the
        # newest commit, sent again over the main connection) comes on the same subscription.
        head = await engine.play.store.head(table_id)

        async def news_heard() -> bool:
            # Sent again until heard: the server may route it before it has the live connection's
            # subscription back (nats-py reports that connection connected once it sent it).
            await engine.runtime.nats.publish(live_subject(engine.runtime, table_id), head.encode())
            await asyncio.sleep(0.1)
            return bool(feed.delivered > delivered)

        await eventually(news_heard)  # the same subscription hears news again
        seen = [first.seq]
        while seen[-1] < seq:
            seen.append((await anext(updates)).seq)
        assert seen == list(range(first.seq, seq + 1))

        game = finished("after-restart", "willi", ["ada", "ben", "cai", "dev"], [3, 1, 0, 2])
        await engine.play.writer.announcer.publish_results(game)  # JetStream on the healed connection
        async with scoring(f"127.0.0.1:{services['scoring'].port}") as stub:
            results = await eventually(lambda: table_results(stub, auth(own_settings), "after-restart"))
        assert len(results) == 1  # the durable consumer pulls again
    finally:
        await close_all(clients)


async def test_a_protocol_error_from_nats_reconnects_instead_of_closing(settings: Settings) -> None:
    async with open_runtime(settings, name="odd-subject") as runtime:
        news: asyncio.Queue[bytes] = asyncio.Queue()

        async def heard(msg: object) -> None:
            await news.put(msg.data)  # type: ignore[attr-defined]

        await runtime.nats.subscribe(runtime.subject("echo"), cb=heard)
        await runtime.nats.publish("x" * 5000, b"too long a subject")  # "maximum control line exceeded"
        await eventually(lambda: not runtime.nats.is_connected)
        await eventually(lambda: runtime.nats.is_connected, timeout=15)
        assert not runtime.nats.is_closed
        await runtime.nats.publish(runtime.subject("echo"), b"back")
        assert await asyncio.wait_for(news.get(), 5) == b"back"  # and the subscription came back too


async def test_an_act_answers_from_its_commit_while_nats_is_down(
        own: OwnServers, services: dict[str, Running]) -> None:
    # Round 1 of Willi Stich: one card each.
    clients, table_id = await seated_players(endpoints(services), "willi-stich", 3, turn_seconds=0)
    engine = services["engine"].service
    assert isinstance(engine, PlayService)
    try:
        rng = random.Random(3)
        own.nats.kill()
        acknowledged = []
        while True:  # round 1 ends after three calls and three cards: its last act has a result
            seq, _seat, _action, events = await play_one(clients, table_id, "willi-stich", rng)
            acknowledged.append(seq)
            if any(e.get("type") == "round_over" for e in events):
                break
        store = engine.play.store
        assert [r.seq for r in await store.log_after(table_id, acknowledged[0] - 1)] == acknowledged
        assert await outbox_size(engine.runtime) == 1  # the result waits for JetStream
        own.nats.restart()

        async def relayed() -> bool:
            return await outbox_size(engine.runtime) == 0

        await eventually(relayed, timeout=20)
        stream = engine.runtime.js
        message = await stream.get_last_msg(f"{engine.runtime.settings.key_prefix.upper()}_RESULTS",
                                            engine.runtime.subject("results", "willi-stich", "round"))
        assert message.headers is not None
        assert message.headers["Nats-Msg-Id"].startswith(f"{table_id}:{acknowledged[-1]}:")
    finally:
        await close_all(clients)


async def test_the_services_stop_cleanly_while_nats_is_away(own: OwnServers, own_settings: Settings) -> None:
    async with running_services(own_settings, SERVICE_NAMES) as running:
        own.nats.kill()
        await eventually(lambda: not running[0].service.runtime.nats.is_connected)
    assert running[0].service.runtime.nats.is_closed


async def test_an_act_while_redis_is_down_is_unavailable_not_internal(
        own: OwnServers, services: dict[str, Running]) -> None:
    clients, table_id = await seated_players(endpoints(services), "willi-stich", 3, turn_seconds=0)
    try:
        own.redis.kill()
        for client in clients:  # nobody can even read the table: nothing was committed
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await client.act(table_id, {"type": "call", "tricks": 0}, attempts=1)
            assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
    finally:
        await close_all(clients)

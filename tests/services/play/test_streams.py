"""Clients that vanish: their streams close, the open-streams gauge returns to 0, the log stays clean.

The stack runs as a child process (`stammtisch up`); the gauge is read from its
/metrics page. Some streams belong to a client process that is SIGKILLed, the
others to channels closed under them. A client behind a network that goes
silent (no FIN, no RST) is found out by the server's keepalive pings.
"""

from __future__ import annotations

import asyncio
import dataclasses
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import grpc
import pytest
from prometheus_client import REGISTRY

from services.host.launch import LaunchedStack, start_stack
from services.host.runner import running_services
from shared.api.stammtisch.v1 import engine_pb2, engine_pb2_grpc
from shared.config import SERVICE_NAMES, Settings
from shared.games.registry import engine_class
from shared.infra.runtime import Runtime
from shared.sdk.client import Endpoints, StammtischClient
from shared.tables.clocks import deadline_policy
from shared.tables.feed import TableFeeds
from shared.tables.records import CommitRecord, TableMeta
from shared.tables.store import TableStore
from tests.support.proxy import FaultyProxy
from tests.support.stack import close_all, eventually, seated_players

pytestmark = pytest.mark.integration

#: Bounds a failing wait of the keepalive test only (a passing one ends as soon as it can).
SILENT_SECONDS = 60.0

#: A client process: N Subscribe streams of one table; says "ready" once each has its first update.
_STREAMER = """
import sys, grpc
from shared.api.stammtisch.v1 import engine_pb2, engine_pb2_grpc
address, token, table_id, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
channels = [grpc.insecure_channel(address) for _ in range(count)]
streams = [engine_pb2_grpc.EngineServiceStub(c).Subscribe(
    engine_pb2.SubscribeRequest(table_id=table_id), metadata=(("authorization", "Bearer " + token),))
    for c in channels]
for stream in streams:
    next(stream)
print("ready", flush=True)
sys.stdin.read()
"""


def open_streams(stack: LaunchedStack) -> float:
    """The engine's open-streams gauge, as the stack's /metrics page shows it."""
    with urllib.request.urlopen(f"http://{stack.endpoints['metrics']}/metrics", timeout=5) as page:
        for line in page.read().decode().splitlines():
            if line.startswith('stammtisch_open_streams{service="engine"}'):
                return float(line.rsplit(" ", 1)[1])
    return 0.0


async def until(expected: float, stack: LaunchedStack, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while (value := open_streams(stack)) != expected:
        assert time.monotonic() < deadline, f"open streams {value}, expected {expected}"
        await asyncio.sleep(0.2)


async def test_vanished_clients_close_their_streams_and_leave_no_traceback(
        infra: tuple[str, str], tmp_path: Path) -> None:
    redis_url, nats_url = infra
    stack = start_stack({"REDIS_URL": redis_url, "NATS_URL": nats_url}, tmp_path)
    e = stack.endpoints
    clients: list[StammtischClient] = []
    try:
        clients, table_id = await seated_players(Endpoints.of(e), "willi", 4, turn_seconds=0)
        streamer = subprocess.Popen([sys.executable, "-c", _STREAMER, e["engine"], clients[0].token,
                                     table_id, "6"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    text=True)
        try:
            assert streamer.stdout is not None and streamer.stdout.readline() == "ready\n"
            channels = [grpc.aio.insecure_channel(e["engine"]) for _ in range(4)]
            for channel in channels:
                stream = engine_pb2_grpc.EngineServiceStub(channel).Subscribe(
                    engine_pb2.SubscribeRequest(table_id=table_id), metadata=clients[1].auth)
                await anext(aiter(stream))
            await until(10, stack)
        finally:
            streamer.kill()
            streamer.communicate()
        for channel in channels:
            await channel.close(grace=None)
        await until(0, stack)

        # Error statuses to clients that are gone by the time they are sent.
        for index in range(200):
            channel = grpc.aio.insecure_channel(e["engine"])
            stub = engine_pb2_grpc.EngineServiceStub(channel)
            call = stub.GetView(engine_pb2.GetViewRequest(table_id=f"gone-{index}"),
                                metadata=clients[2].auth)
            stream = stub.Subscribe(engine_pb2.SubscribeRequest(table_id="bad id!"),
                                    metadata=clients[2].auth)
            await asyncio.sleep(0.002 * (index % 5))
            call.cancel()
            stream.cancel()
            await channel.close(grace=None)
        await until(0, stack)
    finally:
        await close_all(clients)
        logged = stack.stop()
    assert "Traceback" not in logged and "ExecuteBatchError" not in logged


async def test_keepalive_closes_the_stream_of_a_client_behind_a_silent_network(settings: Settings) -> None:
    quick = dataclasses.replace(settings, keepalive_seconds=1.0)
    async with running_services(quick, SERVICE_NAMES) as running:
        ends = Endpoints.of({item.service.name: f"127.0.0.1:{item.port}" for item in running})
        clients, table_id = await seated_players(ends, "willi", 4, turn_seconds=0)

        def gauge() -> float:
            return REGISTRY.get_sample_value("stammtisch_open_streams", {"service": "engine"}) or 0.0

        try:
            engine = next(item.port for item in running if item.service.name == "engine")
            async with FaultyProxy("127.0.0.1", engine).running() as proxy:
                before = gauge()
                channel = grpc.aio.insecure_channel(f"127.0.0.1:{proxy.port}")
                stream = engine_pb2_grpc.EngineServiceStub(channel).Subscribe(
                    engine_pb2.SubscribeRequest(table_id=table_id), metadata=clients[0].auth)
                await asyncio.wait_for(anext(aiter(stream)), SILENT_SECONDS)
                await eventually(lambda: gauge() == before + 1, SILENT_SECONDS, "the stream counted")
                proxy.frozen = True  # from now on nothing passes either way, and nothing closes
                # Pings every second, 1 s for an answer: closed within about 2 s when the machine
                # is idle; the deadline leaves room for one loaded by other stacks and benches.
                await eventually(lambda: gauge() == before, SILENT_SECONDS,
                                 "the stream of a silent client to close")
                stream.cancel()
                await channel.close(grace=None)
        finally:
            await close_all(clients)


async def test_a_cancelled_stream_ends_even_when_news_arrives_at_the_same_moment(runtime: Runtime) -> None:
    """asyncio.wait_for (Python 3.11) returns the result instead of raising when a cancellation
    and the awaited result arrive together; a stream of a vanished client then ran on forever."""
    store = TableStore(runtime, deadline_policy(0.05, runtime.settings.idle_close_seconds))
    first = await store.create(TableMeta("same-moment", "willi", ["a", "b", "c", "d"]),
                               engine_class("willi").new(4, {}, 1), [{"type": "game_started"}])
    feeds = TableFeeds(runtime, store)
    seen: list[int] = []

    async def stream() -> None:
        async for record in feeds.commits("same-moment", first.seq):
            seen.append(record.seq)

    task = asyncio.create_task(stream())
    while "same-moment" not in feeds._queues:
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.1)  # waiting for news now
    (queue,) = feeds._queues["same-moment"]
    queue.put_nowait(CommitRecord(first.seq + 1, first.at, first.meta, first.state, [], {}))
    task.cancel()
    await asyncio.sleep(0.2)
    assert task.done(), f"the stream went on after its cancellation (saw {seen})"
    assert "same-moment" not in feeds._queues  # and gave up its subscription

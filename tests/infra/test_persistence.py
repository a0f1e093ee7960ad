"""`stammtisch up` keeps the Redis and NATS it started alive, and Redis keeps its data (AOF).

The stack runs as a child process, exactly as `make run` starts it, with its
own redis-server and nats-server in its data folder. Its Redis and then its
NATS are SIGKILLed between moves; `up` restarts each on the same port and
data, and every move acknowledged before is still in the table's log.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import time
import uuid
from pathlib import Path

import grpc
import pytest
import redis.asyncio as aioredis
import redis.exceptions
from grpc_health.v1 import health_pb2, health_pb2_grpc

from services.host.launch import start_stack
from shared.infra.credentials import local_logins, with_login
from shared.infra.local import free_port
from shared.sdk.client import Endpoints, StammtischClient
from tests.support.stack import close_all, play_one, seated_players

pytestmark = pytest.mark.integration


async def redis_pid(url: str) -> int | None:
    """The process id of the Redis at ``url``, None while nothing answers."""
    client = aioredis.from_url(url, socket_connect_timeout=1)
    try:
        return int((await client.info("server"))["process_id"])
    except (redis.exceptions.ConnectionError, redis.exceptions.BusyLoadingError):
        return None
    finally:
        await client.aclose()


def nats_pid(port: int) -> int:
    """The nats-server serving ``port`` (the stack's child, found by its command line)."""
    for entry in Path("/proc").iterdir():
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv[0].endswith(b"nats-server") and str(port).encode() in argv:
            return int(entry.name)
    raise AssertionError(f"no nats-server on port {port}")


async def until_serving(address: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    async with grpc.aio.insecure_channel(address) as channel:
        while time.monotonic() < deadline:
            reply = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(),
                                                                    timeout=5)
            if reply.status == health_pb2.HealthCheckResponse.SERVING:
                return
            await asyncio.sleep(0.1)
    raise AssertionError(f"{address} not SERVING within {timeout} s")


async def test_up_restarts_a_killed_redis_and_nats_and_keeps_every_acknowledged_move(
        tmp_path: Path) -> None:
    env = {"REDIS_URL": f"redis://127.0.0.1:{free_port()}/0", "NATS_URL": f"nats://127.0.0.1:{free_port()}",
           "STAMMTISCH_KEY_PREFIX": "aof" + uuid.uuid4().hex[:8], "STAMMTISCH_LOG_LEVEL": "warning"}
    stack = start_stack(env, tmp_path)
    redis_url = with_login("redis://" + stack.endpoints["redis"], local_logins(tmp_path).redis)
    clients: list[StammtischClient] = []
    try:
        clients, table_id = await seated_players(Endpoints.of(stack.endpoints), "willi", 4, turn_seconds=0)
        rng = random.Random(5)
        acknowledged: dict[int, int] = {}

        async def play(moves: int) -> None:
            for _ in range(moves):
                seq, seat, _action, _events = await play_one(clients, table_id, "willi", rng)
                acknowledged[seq] = seat

        await play(6)
        first = await redis_pid(redis_url)
        assert first is not None
        os.kill(first, signal.SIGKILL)
        deadline = time.monotonic() + 30
        while (await redis_pid(redis_url)) in (None, first):
            assert time.monotonic() < deadline, "no new redis-server within 30 s"
            await asyncio.sleep(0.1)
        await until_serving(stack.endpoints["engine"])
        await play(6)

        os.kill(nats_pid(int(stack.endpoints["nats"].rsplit(":", 1)[1])), signal.SIGKILL)
        await asyncio.sleep(0.5)
        await until_serving(stack.endpoints["engine"])
        await play(6)

        seen = []
        async for update in clients[0].updates(table_id, 0):
            seen.append(update)
            if update.seq >= max(acknowledged):
                break
        assert [u.seq for u in seen] == list(range(1, max(acknowledged) + 1))
        for seq, seat in acknowledged.items():
            assert any(e.get("seat") == seat for e in seen[seq - 1].events), seq
        restarted = [json.loads(line)["name"] for line in stack.log_path.read_text().splitlines()
                     if '"local_server_restarted"' in line]
        assert restarted == ["redis-server", "nats-server"]
    finally:
        await close_all(clients)
        stack.stop()
    assert (tmp_path / "redis" / "appendonlydir").is_dir()

"""A clubs process SIGKILLed while its push outbox holds jobs (the gateway is down) loses none:
a new process delivers every acknowledged notification, each once."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from services.host.healthcheck import check
from services.host.launch import STAMMTISCH
from services.host.runner import running_services
from services.tools.perf.push_gateway import Gateway, push_gateway
from shared.api.stammtisch.v1 import clubs_pb2 as K
from shared.config import SERVICE_NAMES, Settings
from shared.infra.local import free_port
from shared.sdk.client import Endpoints, StammtischClient
from tests.support.clubs import rpc, until

pytestmark = pytest.mark.integration
SENDERS = 12


@pytest.fixture
def gateway() -> Iterator[Gateway]:
    with push_gateway() as gw:
        yield gw


def clubs_process(settings: Settings, gateway: Gateway, port: int, log: Path) -> subprocess.Popen[bytes]:
    """`stammtisch serve --service clubs` against the test's Redis, NATS and namespace."""
    env = {**os.environ, "REDIS_URL": settings.redis_url, "NATS_URL": settings.nats_url,
           "STAMMTISCH_KEY_PREFIX": settings.key_prefix, "STAMMTISCH_TOKEN_SECRET": settings.token_secret,
           "STAMMTISCH_CLUBS_PORT": str(port), "STAMMTISCH_METRICS_PORT": str(free_port()),
           "STAMMTISCH_PUSH_GATEWAY_URL": gateway.url}
    with log.open("ab") as out:
        process = subprocess.Popen([STAMMTISCH, "serve", "--service", "clubs"], env=env, stdout=out,
                                   stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    while not check("clubs", f"127.0.0.1:{port}", timeout=1.0):
        assert process.poll() is None and time.monotonic() < deadline, log.read_text()[-2000:]
        time.sleep(0.2)
    return process


async def test_a_killed_clubs_process_leaves_its_outbox_to_the_next(
        settings: Settings, gateway: Gateway, tmp_path: Path) -> None:
    port = free_port()
    others = [name for name in SERVICE_NAMES if name != "clubs"]
    async with running_services(settings, others) as running:
        addresses = {item.service.name: f"127.0.0.1:{item.port}" for item in running}
        endpoints = Endpoints.of({**addresses, "clubs": f"127.0.0.1:{port}"})
        gateway.fail_next = 10**6  # the gateway is down: every job stays in the outbox
        first = clubs_process(settings, gateway, port, tmp_path / "clubs.log")
        second: subprocess.Popen[bytes] | None = None
        clients = [StammtischClient(endpoints) for _ in range(SENDERS + 1)]
        try:
            for index, client in enumerate(clients):
                await client.login(f"p{index}")
            bruno, senders = clients[0], clients[1:]
            await rpc(bruno, "RegisterPushToken", platform=K.PUSH_PLATFORM_FCM, token="bruno-phone",
                      app_id="de.example.stammtisch")
            for sender in senders:  # each acknowledged: its notification and push job are in Redis
                await rpc(sender, "RequestFriend", player_id=bruno.player_id)
            await asyncio.sleep(1.0)  # deliveries fail and are rescheduled
            first.send_signal(signal.SIGKILL)
            first.wait()
            gateway.fail_next = 0
            second = clubs_process(settings, gateway, port, tmp_path / "clubs.log")
            notes = {n.notification_id for n in (await rpc(bruno, "ListInbox")).notifications}
            assert len(notes) == SENDERS

            async def all_pushed() -> bool:
                return {body["notification_id"] for body in gateway.of_kind("FRIEND_REQUEST")} == notes
            await until(all_pushed, 60)
            await asyncio.sleep(1.0)
            keys = [body["idempotency_key"] for body in gateway.of_kind("FRIEND_REQUEST")]
            assert len(keys) == len(set(keys)) == SENDERS
        finally:
            for client in clients:
                await client.close()
            for process in (first, second):
                if process is not None and process.poll() is None:
                    process.terminate()
                    process.wait(10)

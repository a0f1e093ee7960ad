"""One front door: every service on one TLS address through a real nginx (services/host/door.py).

`stammtisch up` prints the door and its CA first; the SDK plays a whole game through it with one
channel; with several workers the table header sends a table's players to one process, and a
dead process's tables go on elsewhere.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import re
import signal
import urllib.request
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from services.host.launch import LaunchedStack, launched_stack
from shared.config import Settings
from shared.games.registry import bot_levels
from shared.sdk.botplayer import play_seat
from shared.sdk.client import Endpoints, StammtischClient
from tests.support.door import door_in_front
from tests.support.stack import close_all, seated_players

pytestmark = pytest.mark.integration
SEATS = 4
_STREAMS = re.compile(r'stammtisch_open_streams\{service="engine"\} (\S+)')


def _open_streams(address: str) -> float:
    """Engine streams open on one worker (its own /metrics)."""
    with urllib.request.urlopen(f"http://{address}", timeout=5) as page:
        found = _STREAMS.search(page.read().decode())
    return float(found.group(1)) if found else 0.0


async def _whole_game(endpoints: Endpoints) -> None:
    clients, table_id = await seated_players(endpoints, "willi", SEATS, turn_seconds=0)
    try:
        bot = bot_levels("willi")["heuristic"]
        finals = await asyncio.wait_for(asyncio.gather(*(
            play_seat(client, table_id, bot(), random.Random(seat))
            for seat, client in enumerate(clients))), 120)
    finally:
        await close_all(clients)
    assert all(final.view["over"] for final in finals)


async def test_up_prints_the_door_and_its_ca_first_and_a_game_plays_through_it(
        infra: tuple[str, str], tmp_path: Path) -> None:
    redis_url, nats_url = infra
    with launched_stack({"REDIS_URL": redis_url, "NATS_URL": nats_url}, tmp_path) as stack:
        assert stack.ca == tmp_path / "tls" / "ca.crt"
        assert stack.banner[:2] == [f"door grpcs://{stack.door}", f"ca {stack.ca}"]
        assert stack.banner[2].startswith("Stammtisch is up")
        assert oct((tmp_path / "tls" / "ca.key").stat().st_mode & 0o777) == "0o600"
        assert oct((tmp_path / "tls" / "server.key").stat().st_mode & 0o777) == "0o600"
        await _whole_game(Endpoints.door(stack.door, stack.ca))
        err = stack.stop()
    assert stack.process.returncode == 0, err
    assert '"event": "door_closed"' in err


async def test_a_second_up_on_the_same_data_keeps_the_ca(infra: tuple[str, str], tmp_path: Path) -> None:
    """The development CA is made once: a phone that trusts it keeps trusting the next run."""
    redis_url, nats_url = infra
    env = {"REDIS_URL": redis_url, "NATS_URL": nats_url}
    with launched_stack(env, tmp_path):
        ca = (tmp_path / "tls" / "ca.crt").read_bytes()
    with launched_stack(env, tmp_path) as second:
        assert second.ca is not None and second.ca.read_bytes() == ca
        async with StammtischClient(Endpoints.door(second.door, ca)) as client:
            assert await client.games()


async def test_health_and_reflection_answer_through_the_door(settings: Settings, tmp_path: Path) -> None:
    async with door_in_front(settings, tmp_path) as opened:
        ends = opened.endpoints
        async with grpc.aio.secure_channel(ends.lobby, ends.credentials()) as channel:
            health = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest())
            assert health.status == health_pb2.HealthCheckResponse.SERVING
            call = reflection_pb2_grpc.ServerReflectionStub(channel).ServerReflectionInfo(
                iter([reflection_pb2.ServerReflectionRequest(list_services="")]))
            listed = [service.name async for reply in call
                      for service in reply.list_services_response.service]
        assert "stammtisch.v1.LobbyService" in listed


async def test_one_channel_serves_every_stub_through_the_door(settings: Settings, tmp_path: Path) -> None:
    async with door_in_front(settings, tmp_path) as opened, StammtischClient(opened.endpoints) as client:
        assert len({id(channel) for channel in client._channels.values()}) == 1
        await client.login("anna")
        assert await client.games()


async def _streams_opened(stack: LaunchedStack, clients: list[StammtischClient],
                          table_id: str) -> list[float]:
    """Each worker's engine streams opened by the table's players' Play streams."""
    metrics = [stack.endpoints[name] for name in ("metrics", "metrics2")]
    for _ in range(100):  # the last table's streams close on the servers a moment after the client's
        if not any(_open_streams(address) for address in metrics):
            break
        await asyncio.sleep(0.1)
    before = [_open_streams(address) for address in metrics]
    async with contextlib.AsyncExitStack() as streams:
        for client in clients:
            stream = await streams.enter_async_context(client.play(table_id))
            await asyncio.wait_for(stream.next_update(), 10)
        after = [_open_streams(address) for address in metrics]
    return [now - then for now, then in zip(after, before, strict=True)]


async def test_a_tables_players_meet_in_one_worker_and_its_death_does_not_end_the_game(
        infra: tuple[str, str], tmp_path: Path) -> None:
    """Through the door, the table header (not Table.play_port) picks the worker: each table's four
    streams open on one worker. Killing a worker mid-game: the door sends its tables to the other
    and every game ends."""
    redis_url, nats_url = infra
    with launched_stack({"REDIS_URL": redis_url, "NATS_URL": nats_url}, tmp_path, workers=2) as stack:
        assert stack.ca is not None
        ends = Endpoints.door(stack.door, stack.ca)
        tables = [await seated_players(ends, "willi", SEATS, turn_seconds=0) for _ in range(3)]
        try:
            for clients, table_id in tables:
                assert all(table_id not in client._placed for client in clients)
                opened = await _streams_opened(stack, clients, table_id)
                assert sorted(opened) == [0, SEATS], opened
            bot = bot_levels("willi")["heuristic"]
            playing = asyncio.ensure_future(asyncio.gather(*(
                play_seat(client, table_id, bot(), random.Random(seat))
                for clients, table_id in tables for seat, client in enumerate(clients))))
            await asyncio.sleep(1.0)
            os.kill(stack.pids[0], signal.SIGKILL)
            finals = await asyncio.wait_for(playing, 180)
        finally:
            await close_all([client for clients, _ in tables for client in clients])
        assert all(final.view["over"] for final in finals)


def _group_alive(pgid: int) -> bool:
    """Some process of the group still runs (zombies, waiting for an init that reaps, do not)."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[2]) == pgid and fields[0] != "Z":
                return True
    return False


async def test_a_killed_door_is_restarted_and_leaves_nothing_behind(
        settings: Settings, tmp_path: Path) -> None:
    """SIGKILL to nginx's master (a crash): its orphaned workers would hold the port; the door
    clears them and starts again on the same port, and on exit no nginx process is left."""
    async with door_in_front(settings, tmp_path) as opened:
        door = opened.door
        assert door.process is not None
        first = door.process.pid
        os.kill(first, signal.SIGKILL)
        for _ in range(100):
            if door.restarts:
                break
            await asyncio.sleep(0.1)
        assert door.restarts == 1 and door.process.pid != first and not _group_alive(first)
        await _whole_game(opened.endpoints)
        second = door.process.pid
    assert not _group_alive(second)

"""`stammtisch up --workers 2`: two server processes on the same ports, supervised.

Each client has its own connection (shared/sdk/client.py), so the kernel
spreads them over the workers; a table's calls go to the worker that holds it
(shared/tables/placement.py). Each worker's own metrics say which served calls.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import re
import signal
import time
import urllib.request
from pathlib import Path

import pytest

from services.host.launch import LaunchedStack, launched_stack
from shared.games.registry import bot_levels
from shared.sdk.botplayer import play_seat
from shared.sdk.client import Endpoints, StammtischClient, Update
from tests.support.stack import close_all, seated_players

pytestmark = pytest.mark.integration
TABLES = 4
SEATS = 4
_ACTS = re.compile(r'stammtisch_rpc_duration_seconds_count\{code="OK",method="Act",service="engine"\} (\S+)')
_STREAMS = re.compile(r'stammtisch_open_streams\{service="engine"\} (\S+)')


def _metric(address: str, pattern: re.Pattern[str]) -> float:
    """One value of one worker's own /metrics (0 until it is first recorded)."""
    with urllib.request.urlopen(f"http://{address}", timeout=5) as page:
        found = pattern.search(page.read().decode())
    return float(found.group(1)) if found else 0.0


def _acts_served(address: str) -> float:
    """Act calls one worker answered OK."""
    return _metric(address, _ACTS)


def _workers_metrics(stack: LaunchedStack) -> list[str]:
    """Each worker's metrics address, in the workers' order."""
    return [stack.endpoints[name] for name in ("metrics", "metrics2")]


async def _holder(stack: LaunchedStack, client: StammtischClient, table_id: str) -> int:
    """Which worker (its index) the lobby says holds the table."""
    return stack.table_ports["engine"].index((await client.get_table(table_id)).play_port)


def _answers_metrics(address: str, deadline: float) -> bool:
    while time.monotonic() < deadline:
        try:
            _acts_served(address)
            return True
        except OSError:
            time.sleep(0.2)
    return False


async def _tables(stack: LaunchedStack) -> list[tuple[list[StammtischClient], str]]:
    return [await seated_players(Endpoints.of(stack.endpoints), "willi", SEATS, turn_seconds=0)
            for _ in range(TABLES)]


async def _finish(tables: list[tuple[list[StammtischClient], str]]) -> list[Update]:
    bot = bot_levels("willi")["heuristic"]
    return await asyncio.wait_for(asyncio.gather(*(
        play_seat(client, table_id, bot(), random.Random(seat))
        for clients, table_id in tables for seat, client in enumerate(clients))), 240)


async def _close(tables: list[tuple[list[StammtischClient], str]]) -> None:
    await close_all([client for clients, _ in tables for client in clients])


async def test_two_workers_share_the_ports_and_both_serve_whole_games(
        infra: tuple[str, str], tmp_path: Path) -> None:
    redis_url, nats_url = infra
    with launched_stack({"REDIS_URL": redis_url, "NATS_URL": nats_url}, tmp_path, workers=2) as stack:
        assert len(set(stack.pids)) == 2 and os.getpid() not in stack.pids
        tables = await _tables(stack)
        try:
            holders = {await _holder(stack, clients[0], table_id) for clients, table_id in tables}
            finals = await _finish(tables)
        finally:
            await _close(tables)
        assert all(final.view["over"] for final in finals)
        served = [_acts_served(address) for address in _workers_metrics(stack)]
        assert [count > 0 for count in served] == [worker in holders for worker in range(2)], served
        err = stack.stop()
    assert stack.process.returncode == 0, err
    assert err.count('"event": "runtime_closed"') == 2, "each worker stops gracefully"


async def test_a_killed_worker_is_restarted_and_play_goes_on(
        infra: tuple[str, str], tmp_path: Path) -> None:
    redis_url, nats_url = infra
    with launched_stack({"REDIS_URL": redis_url, "NATS_URL": nats_url}, tmp_path, workers=2) as stack:
        tables = await _tables(stack)
        try:
            playing = asyncio.ensure_future(_finish(tables))
            await asyncio.sleep(1.0)
            os.kill(stack.pids[1], signal.SIGKILL)
            finals = await playing
        finally:
            await _close(tables)
        assert all(final.view["over"] for final in finals)
        deadline = time.monotonic() + 30
        while "worker_restarted" not in stack.log_path.read_text() and time.monotonic() < deadline:
            await asyncio.sleep(0.2)
        log = stack.log_path.read_text()
        assert f'"pid": {stack.pids[1]}, "exitcode": -9, "event": "worker_died"' in log
        restarted = re.search(r'"worker": 2, "pid": (\d+), "restarts": 1, "event": "worker_restarted"', log)
        assert restarted is not None and int(restarted.group(1)) != stack.pids[1]
        assert _answers_metrics(stack.endpoints["metrics2"], deadline), "the new worker serves its port"


async def test_a_tables_players_all_play_on_the_worker_that_holds_it(
        infra: tuple[str, str], tmp_path: Path) -> None:
    """The lobby names the worker that holds each table (Table.play_port) and the SDK plays it
    there: a table's four streams open on that worker, whichever workers the kernel gave the
    players' connections. Before, each stream opened on any worker, and every commit reached
    the other worker through NATS, to be decoded and made into views a second time."""
    redis_url, nats_url = infra
    with launched_stack({"REDIS_URL": redis_url, "NATS_URL": nats_url}, tmp_path, workers=2) as stack:
        for _ in range(3):  # each table by chance on one worker: 1 in 8 without placement
            clients, table_id = await seated_players(Endpoints.of(stack.endpoints), "willi", SEATS,
                                                     turn_seconds=0)
            try:
                holder = await _holder(stack, clients[0], table_id)
                before = [_metric(address, _STREAMS) for address in _workers_metrics(stack)]
                async with contextlib.AsyncExitStack() as streams:
                    for client in clients:
                        stream = await streams.enter_async_context(client.play(table_id))
                        await asyncio.wait_for(stream.next_update(), 10)
                    after = [_metric(address, _STREAMS) for address in _workers_metrics(stack)]
            finally:
                await close_all(clients)
            opened = [now - then for now, then in zip(after, before, strict=True)]
            assert opened == [SEATS if worker == holder else 0 for worker in range(2)], opened

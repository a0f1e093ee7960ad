"""The tournament load test's harness: entrants spread over client processes that register and
play through the real API, and a launched stack that does not outlive its launcher."""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import os
import signal
import subprocess
import sys
import textwrap
import time
import tracemalloc
from pathlib import Path

import pytest

from services.tools.perf.tournament_clients import (
    EntrantProcesses,
    Share,
    _biggest_allocations,
    _memory_guard,
    current_rss_bytes,
    shares,
)
from shared.config import Settings
from shared.sdk import tournament as sdk
from shared.sdk.client import StammtischClient
from tests.services.tournament.test_tournament import endpoints

pytestmark = pytest.mark.integration


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return dataclasses.replace(settings, bot_delay_seconds=0.01)


def test_entrants_are_spread_evenly_over_the_processes_without_overlap() -> None:
    assert shares(10, 3) == [(0, 4), (4, 3), (7, 3)]
    assert shares(2, 5) == [(0, 1), (1, 1)]
    parts = shares(10_001, 20)
    assert sum(count for _first, count in parts) == 10_001
    assert all(first + count == following for (first, count), (following, _) in itertools.pairwise(parts))


async def test_a_process_past_its_memory_cap_is_noticed_and_says_where_its_memory_went() -> None:
    await asyncio.wait_for(_memory_guard(current_rss_bytes() // 2), 5)
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(_memory_guard(current_rss_bytes() * 4), 1.2)
    assert _biggest_allocations() == []  # nothing to say unless Python traces its allocations
    tracemalloc.start(2)
    try:
        kept = [bytearray(4 * 2**20)]
        lines = _biggest_allocations()
    finally:
        tracemalloc.stop()
    assert kept and lines and "test_tournament_load.py" in lines[0]


async def test_client_processes_register_and_play_their_entrants(stack: dict[str, str]) -> None:
    """Two processes, three entrants each: every entrant registered, the tournament finished, and
    each process reported its own actions, CPU and memory."""
    organizer = StammtischClient(endpoints(stack))
    await organizer.login("organizer")
    created = await sdk.create_tournament(organizer, "Verteilt", "willi-stich", "series", capacity=6,
                                          rounds=1, table_size=3, options={"start_round": 19})
    tid = created.tournament_id
    parts = [Share(dataclasses.asdict(endpoints(stack)), tid, "willi-stich", first, count, 0.0, 2**31, 120.0)
             for first, count in shares(6, 2)]
    entrants = EntrantProcesses(parts)
    try:
        assert await asyncio.to_thread(entrants.step, "login", 60.0) == []
        assert await asyncio.to_thread(entrants.step, "register", 60.0) == []
        assert len((await sdk.get(organizer, tid)).players) == 6
        await sdk.start(organizer, tid)
        measured = await asyncio.to_thread(entrants.play, 120.0)
    finally:
        entrants.close()
    assert [part.failures for part in measured] == [[], []]
    assert len({part.pid for part in measured} - {0, os.getpid()}) == 2
    assert all(part.actions and part.peak_rss_bytes > 0 and part.client_cpu > 0 for part in measured)
    final = await sdk.standings(organizer, tid)
    assert len(final.standings) == 6
    await organizer.close()


async def test_many_concurrent_registrations_are_all_answered(stack: dict[str, str]) -> None:
    """Three hundred entrants register at the same moment: every call is answered, none refused."""
    organizer = StammtischClient(endpoints(stack))
    await organizer.login("organizer")
    created = await sdk.create_tournament(organizer, "Andrang", "willi-stich", "series", capacity=300,
                                          rounds=1, table_size=4)
    clients = [StammtischClient(endpoints(stack)) for _ in range(300)]
    await asyncio.gather(*(client.login(f"r{index}") for index, client in enumerate(clients)))
    await asyncio.gather(*(sdk.register(client, created.tournament_id) for client in clients))
    assert len((await sdk.get(organizer, created.tournament_id)).players) == 300
    await asyncio.gather(organizer.close(), *(client.close() for client in clients))


_LAUNCHER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from services.host.launch import launched_stack
    from shared.infra.local import local_servers
    with local_servers(Path(sys.argv[1]) / "servers") as (redis_url, nats_url):
        env = {"REDIS_URL": redis_url, "NATS_URL": nats_url}
        with launched_stack(env, Path(sys.argv[1]) / "stack") as stack:
            print(stack.process.pid, flush=True)
            time.sleep(600)
""")


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.slow
def test_a_launched_stack_and_its_servers_die_with_their_launcher(tmp_path: Path) -> None:
    """The launcher is killed outright (as by the OOM killer): `stammtisch up`, the Redis and the
    NATS it had started stop too instead of running on as orphans."""
    launcher = subprocess.Popen([sys.executable, "-c", _LAUNCHER, str(tmp_path)], stdout=subprocess.PIPE,
                                text=True, cwd=Path(__file__).parents[3])
    try:
        assert launcher.stdout is not None
        stack_pid = int(launcher.stdout.readline())
        started = [pid for pid in _children(launcher.pid)]
        assert stack_pid in started and len(started) >= 3  # the stack, Redis, NATS
    finally:
        launcher.send_signal(signal.SIGKILL)
        launcher.wait()
    deadline = time.monotonic() + 30
    while any(_alive(pid) for pid in started) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert [pid for pid in started if _alive(pid)] == []

"""`stammtisch bench --soak`: many live tables and open streams at once; the servers' memory.

Forty players sit in groups of four at the tables (a player may sit at many):
every table's game is running, and each seat holds a Subscribe stream open on
it, each stream over a connection of its own, as phones hold theirs (so the
servers hold 4,000 connections, spread over the workers by the kernel). Once
every stream is counted open by the servers (the open-streams gauge of every
worker), the run prints the resident memory of all server processes
together and what CPU they spend while every stream waits for news, then
lets go. It asserts nothing.
"""

from __future__ import annotations

import asyncio
import re
import tempfile
import time
import urllib.request
from collections import Counter
from pathlib import Path

import grpc

from services.host.launch import LaunchedStack, launched_stack
from services.tools.perf.bench import STACK_ENV, say, server_pids, servers_cpu
from shared.api.stammtisch.v1 import engine_pb2, engine_pb2_grpc
from shared.infra.local import local_servers
from shared.sdk.client import Endpoints, StammtischClient, open_channel

GAME = "willi"
SEATS = 4
GROUPS = 10
#: How long the held streams' idle CPU is measured.
IDLE_SECONDS = 10.0
#: Tables set up at once (lobby calls in flight).
BATCH = 50
_OPEN = re.compile(r'^stammtisch_open_streams\{service="engine"\} (\S+)$', re.MULTILINE)


def rss_bytes(pid: int) -> int:
    """Resident memory of a process (Linux /proc; 0 elsewhere)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    found = re.search(r"^VmRSS:\s+(\d+) kB", status, re.MULTILINE)
    return int(found.group(1)) * 1024 if found else 0


def open_streams(stack: LaunchedStack) -> list[float]:
    """Engine streams open right now, by worker (each worker's own /metrics)."""
    counts = []
    for name, address in stack.endpoints.items():
        if name.startswith("metrics"):
            with urllib.request.urlopen(f"http://{address}", timeout=10) as page:
                found = _OPEN.search(page.read().decode())
            counts.append(float(found.group(1)) if found else 0.0)
    return counts


async def _table(group: list[StammtischClient]) -> str:
    table = await group[0].create_table(GAME, SEATS, join=True, turn_seconds=0)
    for seat, client in enumerate(group[1:], 1):
        await client.join(table.table_id, seat=seat)
    for client in group:
        await client.ready(table.table_id)
    return table.table_id


async def _hold(channel: grpc.aio.Channel, client: StammtischClient, table_id: str,
                failed: Counter[str]) -> None:
    """One stream of ``client``'s player over a connection of its own, read until cancelled;
    a stream the server ends is counted by its status."""
    stub = engine_pb2_grpc.EngineServiceStub(channel)
    try:
        async for _reply in stub.Subscribe(engine_pb2.SubscribeRequest(table_id=table_id),
                                           metadata=client.auth):
            pass
        failed["ended by the server"] += 1
    except grpc.aio.AioRpcError as err:
        failed[f"{err.code().name}: {err.details()}"] += 1


async def soak(stack: LaunchedStack, tables: int, per_table: int) -> None:
    """Set up the tables, open the streams, report memory, let go."""
    ends = Endpoints.of(stack.endpoints)
    clients = [StammtischClient(ends) for _ in range(GROUPS * SEATS)]
    holders: list[asyncio.Task[None]] = []
    channels: list[grpc.aio.Channel] = []
    try:
        for index, client in enumerate(clients):
            await client.login(f"soak{index}")
        groups = [clients[i:i + SEATS] for i in range(0, len(clients), SEATS)]
        base = sum(rss_bytes(pid) for pid in server_pids(stack))
        started = time.perf_counter()
        table_ids: list[tuple[list[StammtischClient], str]] = []
        for first in range(0, tables, BATCH):
            batch = [groups[n % GROUPS] for n in range(first, min(tables, first + BATCH))]
            ids = await asyncio.gather(*(_table(group) for group in batch))
            table_ids.extend(zip(batch, ids, strict=True))
        say(f"  {tables} live tables of {GAME} set up in {time.perf_counter() - started:.1f} s")
        failed: Counter[str] = Counter()
        for group, table_id in table_ids:
            for client in group[:per_table]:
                channels.append(open_channel(ends.engine))
                holders.append(asyncio.create_task(_hold(channels[-1], client, table_id, failed)))
        wanted = len(holders)
        deadline = time.monotonic() + 120
        while sum(now := await asyncio.to_thread(open_streams, stack)) < wanted - sum(failed.values()) \
                and time.monotonic() < deadline:
            await asyncio.sleep(1.0)
        say(f"  {sum(now):.0f} of {wanted} streams open (the servers' gauge; by worker: "
            f"{', '.join(f'{count:.0f}' for count in now)}), "
            f"{time.perf_counter() - started:.1f} s after the start")
        for reason, count in failed.most_common():
            say(f"  {count} streams failed: {reason}")
        await asyncio.sleep(5.0)  # let the servers settle
        rss = {pid: rss_bytes(pid) for pid in server_pids(stack)}
        each = ", ".join(f"pid {pid} {size / 2**20:,.0f} MB" for pid, size in rss.items())
        say(f"  server RSS {sum(rss.values()) / 2**20:,.0f} MB summed over {len(rss)} processes "
            f"({each}); {base / 2**20:,.0f} MB before the tables (target: at most 2,048 MB)")
        before = servers_cpu(stack)
        await asyncio.sleep(IDLE_SECONDS)
        after = servers_cpu(stack)
        if before is not None and after is not None:
            say(f"  server CPU while the streams wait for news: {(after - before) / IDLE_SECONDS:.0%} "
                f"of a core (summed over the processes, {IDLE_SECONDS:.0f} s)")
    finally:
        for task in holders:
            task.cancel()
        await asyncio.gather(*holders, return_exceptions=True)
        await asyncio.gather(*(channel.close() for channel in channels))
        await asyncio.gather(*(client.close() for client in clients))


def main(workers: int, tables: int, streams: int) -> int:
    """Start Redis, NATS and `stammtisch up --workers N`; soak; stop everything."""
    per_table = max(1, min(SEATS, streams // max(1, tables)))
    say(f"Soak: {tables} live tables, {per_table * tables} open streams, {workers} worker(s)")
    env = {**STACK_ENV, "STAMMTISCH_IDLE_CLOSE_SECONDS": "86400"}
    with tempfile.TemporaryDirectory(prefix="stammtisch-soak-") as raw, \
            local_servers(Path(raw) / "servers") as (redis_url, nats_url), \
            launched_stack({**env, "REDIS_URL": redis_url, "NATS_URL": nats_url}, Path(raw) / "stack",
                           workers=workers) as stack:
        try:
            asyncio.run(soak(stack, tables, per_table))
        except grpc.aio.AioRpcError as err:
            say(f"  soak failed: {err.code().name}: {err.details()}")
            return 1
    return 0

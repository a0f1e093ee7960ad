"""`stammtisch bench --catchup` (and a step of `make bench`): resuming from seq 0 on a long log.

A Wie Waldi table gets ``COMMITS`` commits (heuristic bots, several games of a
series, each through :meth:`TableStore.commit` as the services make them),
written into the stack's Redis from this process, so no server has seen them.
After a warm-up on a short log, the player of each seat in turn subscribes
from seq 0 through the arbiter, and the step prints how long all of the log
took to arrive, the server CPU it cost, and what the table keeps in Redis per
commit (log and head). It asserts nothing.
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
import time
from pathlib import Path

from services.host.launch import LaunchedStack, launched_stack
from services.tools.perf.bench import STACK_ENV, say, servers_cpu
from shared.api.stammtisch.v1 import arbiter_pb2
from shared.config import Settings
from shared.games.base import Game
from shared.games.registry import bot_levels, engine_class
from shared.infra.runtime import open_runtime
from shared.sdk.client import CATCH_UP_BATCH, Endpoints, StammtischClient, updates_of
from shared.tables.announce import RELAY_AFTER_SECONDS
from shared.tables.clocks import deadline_policy
from shared.tables.records import CommitRecord, TableMeta
from shared.tables.store import Change, TableStore

GAME = "wie-waldi"
SEATS = 4
COMMITS = 5000
TABLE = "catchup"
#: A short log resumed first, so that the measured resumes do not pay for the stack's warm-up.
WARM_TABLE, WARM_COMMITS = "catchup-warm", 300
PREFIX = "catchup"


async def seed_log(store: TableStore, table_id: str, players: list[str], commits: int) -> float:
    """Commit ``commits`` changes to one table (new games as games end); the CPU seconds spent."""
    cls = engine_class(GAME)
    bots = [bot_levels(GAME)["heuristic"]() for _ in range(SEATS)]
    rng = random.Random(1)
    meta = TableMeta(table_id, GAME, players)
    started = time.process_time()
    record = await store.create(meta, cls.new(SEATS, {}, 1), [{"type": "game_started"}])
    while record.seq < commits:
        game = record.game()
        if game.over:
            meta = dataclasses.replace(record.meta, game_no=record.meta.game_no + 1,
                                       seed=record.meta.game_no + 1)
            record = await store.create(meta, cls.new(SEATS, {}, meta.seed), [{"type": "game_started"}])
            continue
        seat = rng.choice(game.to_act())
        action = bots[seat].choose(game.view(seat), rng)

        def act(head: CommitRecord | None, seat: int = seat, action: dict = action) -> Change:
            assert head is not None
            engine: Game = head.game()
            return Change(engine, engine.apply(seat, action), head.meta, seat, action)

        committed, _ = await store.commit(table_id, act)
        assert committed is not None
        record = committed
    return time.process_time() - started


async def redis_bytes(store: TableStore) -> tuple[int, int, int]:
    """(log bytes, head bytes, log entries) of the table as Redis counts them."""
    redis = store.redis
    log_key, head_key = store.key(TABLE, "log"), store.key(TABLE, "head")
    return (int(await redis.memory_usage(log_key, samples=0) or 0),
            int(await redis.memory_usage(head_key, samples=0) or 0), int(await redis.xlen(log_key)))


#: How each seat resumes: (updates per message, last view only).
RESUMES = [(1, False), (1, False), (CATCH_UP_BATCH, False), (CATCH_UP_BATCH, True)]


async def resume_from_zero(client: StammtischClient, table_id: str, last_seq: int,
                           max_batch: int = CATCH_UP_BATCH, last_view_only: bool = False) -> float:
    """Seconds from Subscribe(after_seq=0) to the arrival of ``last_seq``."""
    started = time.perf_counter()
    stream = client.arbiter.Subscribe(arbiter_pb2.ArbiterServiceSubscribeRequest(
        table_id=table_id, after_seq=0, max_batch=max_batch, last_view_only=last_view_only),
        metadata=client.auth)
    async for reply in stream:
        if updates_of(reply)[-1].seq >= last_seq:
            break
    elapsed = time.perf_counter() - started
    stream.cancel()
    return elapsed


async def quiet(stack: LaunchedStack, idle_share: float = 0.05, timeout: float = 60.0) -> None:
    """Wait until the servers' background work on what was seeded is done: the results relay
    has had its turn and the servers used less than ``idle_share`` of a core for two seconds
    (at most ``timeout`` seconds)."""
    await asyncio.sleep(RELAY_AFTER_SECONDS + 1.0)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        before = servers_cpu(stack)
        await asyncio.sleep(2.0)
        after = servers_cpu(stack)
        if before is None or after is None or after - before < idle_share * 2.0:
            return


async def measure(stack: LaunchedStack, redis_url: str, nats_url: str, commits: int = COMMITS) -> None:
    """Seed the logs through the stack's Redis; warm the stack up on a short one; then each
    seat in turn resumes from seq 0 on the long one (a seat's views are never cached yet)."""
    endpoints = Endpoints.of(stack.endpoints)
    settings = dataclasses.replace(Settings.from_env(), redis_url=redis_url, nats_url=nats_url,
                                   key_prefix=PREFIX)
    clients = [StammtischClient(endpoints) for _ in range(SEATS)]
    try:
        async with open_runtime(settings, name="stammtisch-bench-catchup") as runtime:
            players = [await client.login(f"catchup{seat}") for seat, client in enumerate(clients)]
            store = TableStore(runtime, deadline_policy(0.0, 86_400.0))
            await seed_log(store, WARM_TABLE, players, WARM_COMMITS)
            cpu = await seed_log(store, TABLE, players, commits)
            log_bytes, head_bytes, entries = await redis_bytes(store)
        say(f"Catch-up: a {GAME} table of {entries:,} commits (several games); each seat resumes "
            "from seq 0 in turn")
        say(f"  seeding in this process: {cpu / entries * 1e3:5.2f} ms CPU per commit (bots, engine, "
            "encoding, Redis client)")
        say(f"  in Redis: log {log_bytes:,} B = {log_bytes / entries:,.0f} B per commit; "
            f"head {head_bytes:,} B")
        await resume_from_zero(clients[0], WARM_TABLE, WARM_COMMITS)
        await quiet(stack)  # the seeded games' results are relayed and archived, not measured
        for seat, (client, (max_batch, last_view_only)) in enumerate(zip(clients, RESUMES, strict=True)):
            # Half the seats as a client that takes one update per message, one as the SDK,
            # one as a client that shows only the newest view (a phone resuming).
            before = servers_cpu(stack)
            seconds = await resume_from_zero(client, TABLE, entries, max_batch, last_view_only)
            after = servers_cpu(stack)
            server = "n/a" if before is None or after is None else f"{after - before:5.2f} s"
            views = ", last view only" if last_view_only else ""
            say(f"  resume from seq 0 over {entries:,} commits, seat {seat}, {max_batch:>3} per "
                f"message{views}: {seconds:5.2f} s, server CPU {server}")
    finally:
        await asyncio.gather(*(client.close() for client in clients))


def stack_env(redis_url: str, nats_url: str) -> dict[str, str]:
    """The bench's stack settings on these servers, under this step's key prefix."""
    return {**STACK_ENV, "REDIS_URL": redis_url, "NATS_URL": nats_url, "STAMMTISCH_KEY_PREFIX": PREFIX}


async def step(redis_url: str, nats_url: str, data_dir: Path) -> None:
    """The step on its own one-worker stack (own key prefix) against these servers."""
    with launched_stack(stack_env(redis_url, nats_url), data_dir) as stack:
        await measure(stack, redis_url, nats_url)


def main() -> int:
    """`stammtisch bench --catchup`: only this step, on servers of its own."""
    import tempfile

    from shared.infra.local import server_pair

    with tempfile.TemporaryDirectory(prefix="stammtisch-catchup-") as raw, \
            server_pair(Path(raw) / "servers", "everysec") as (redis, nats):
        asyncio.run(step(redis.url, nats.url, Path(raw) / "stack"))
    return 0

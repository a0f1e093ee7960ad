"""`stammtisch bench --catchup` (and a step of `make bench`): resuming from seq 0 on a long log.

A Wie Waldi table gets ``COMMITS`` commits (heuristic bots, several games of a
series, each through :meth:`TableStore.commit` as the services make them),
written into the stack's Redis from this process. Then the player of seat 0
subscribes from seq 0 through the arbiter, a few times, and the step prints
how long all of the log took to arrive, the server CPU it cost, and what the
table keeps in Redis per commit (log and head). It asserts nothing.
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
import time
from pathlib import Path

from services.launch import LaunchedStack, launched_stack
from services.perf.bench import STACK_ENV, say, servers_cpu
from shared.api.stammtisch.v1 import arbiter_pb2
from shared.config import Settings
from shared.games.base import Game
from shared.games.registry import bot_levels, engine_class
from shared.runtime import open_runtime
from shared.sdk.client import Endpoints, StammtischClient
from shared.tables.clocks import deadline_policy
from shared.tables.records import CommitRecord, TableMeta
from shared.tables.store import Change, TableStore

GAME = "wie-waldi"
SEATS = 4
COMMITS = 5000
TABLE = "catchup"
PREFIX = "catchup"
#: Resumes measured one after another; the first also pays for the stack's warm-up.
RESUMES = 4


async def seed_log(store: TableStore, player_id: str, commits: int) -> float:
    """Commit ``commits`` changes to one table (new games as games end); the CPU seconds spent."""
    cls = engine_class(GAME)
    bots = [bot_levels(GAME)["heuristic"]() for _ in range(SEATS)]
    rng = random.Random(1)
    meta = TableMeta(TABLE, GAME, [player_id, *(f"other{seat}" for seat in range(1, SEATS))])
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

        committed, _ = await store.commit(TABLE, act)
        assert committed is not None
        record = committed
    return time.process_time() - started


async def redis_bytes(store: TableStore) -> tuple[int, int, int]:
    """(log bytes, head bytes, log entries) of the table as Redis counts them."""
    redis = store.redis
    log_key, head_key = store.key(TABLE, "log"), store.key(TABLE, "head")
    return (int(await redis.memory_usage(log_key, samples=0) or 0),
            int(await redis.memory_usage(head_key, samples=0) or 0), int(await redis.xlen(log_key)))


async def resume_from_zero(endpoints: Endpoints, client: StammtischClient, last_seq: int) -> float:
    """Seconds from Subscribe(after_seq=0) to the arrival of ``last_seq``."""
    started = time.perf_counter()
    stream = client.arbiter.Subscribe(arbiter_pb2.ArbiterServiceSubscribeRequest(
        table_id=TABLE, after_seq=0), metadata=client.auth)
    async for reply in stream:
        if reply.update.seq >= last_seq:
            break
    elapsed = time.perf_counter() - started
    stream.cancel()
    return elapsed


async def measure(stack: LaunchedStack, redis_url: str, nats_url: str, commits: int = COMMITS) -> None:
    """Seed the log through the stack's Redis, then resume from seq 0 three times."""
    endpoints = Endpoints.of(stack.endpoints)
    settings = dataclasses.replace(Settings.from_env(), redis_url=redis_url, nats_url=nats_url,
                                   key_prefix=PREFIX)
    async with open_runtime(settings, name="stammtisch-bench-catchup") as runtime, \
            StammtischClient(endpoints) as client:
        player_id = await client.login("catchup")
        store = TableStore(runtime, deadline_policy(0.0, 86_400.0))
        cpu = await seed_log(store, player_id, commits)
        log_bytes, head_bytes, entries = await redis_bytes(store)
        say(f"Catch-up: a {GAME} table of {entries:,} commits (several games), seat 0 resumes from seq 0")
        say(f"  seeding in this process: {cpu / entries * 1e3:5.2f} ms CPU per commit (bots, engine, "
            "encoding, Redis client)")
        say(f"  in Redis: log {log_bytes:,} B = {log_bytes / entries:,.0f} B per commit; "
            f"head {head_bytes:,} B")
        for attempt in range(RESUMES):
            before = servers_cpu(stack)
            seconds = await resume_from_zero(endpoints, client, entries)
            after = servers_cpu(stack)
            server = "n/a" if before is None or after is None else f"{after - before:5.2f} s"
            first = " (the stack's first stream: warm-up)" if attempt == 0 else ""
            say(f"  resume from seq 0 over {entries:,} commits (#{attempt + 1}): {seconds:5.2f} s, "
                f"server CPU {server}{first}")


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

    from shared.localinfra import server_pair

    with tempfile.TemporaryDirectory(prefix="stammtisch-catchup-") as raw, \
            server_pair(Path(raw) / "servers", "everysec") as (redis, nats):
        asyncio.run(step(redis.url, nats.url, Path(raw) / "stack"))
    return 0

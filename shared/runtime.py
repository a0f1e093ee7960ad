"""Connections every service shares in one process: Redis, NATS and JetStream.

Opening the runtime declares the JetStream streams, so a fresh NATS server is
usable at once; closing it drains NATS (in-flight messages are delivered)
and closes Redis.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

import nats
import redis.asyncio as aioredis
from nats.aio.client import Client as NATS
from nats.js import JetStreamContext
from nats.js.api import StreamConfig
from nats.js.errors import BadRequestError

from shared.config import Settings
from shared.ids import check_name_part
from shared.logs import get_logger

log = get_logger("runtime")

#: Redis connections one process opens at most; more callers at once wait for one.
REDIS_CONNECTIONS = 256
#: How long a caller waits for a free Redis connection before the call fails.
REDIS_POOL_WAIT_SECONDS = 20.0


def results_stream(settings: Settings) -> StreamConfig:
    """Durable round and game results; duplicates within 2 minutes are dropped by msg id."""
    prefix = settings.key_prefix
    return StreamConfig(name=f"{prefix.upper()}_RESULTS", subjects=[f"{prefix}.results.>"],
                        duplicate_window=120.0, max_age=30 * 86_400.0,
                        num_replicas=settings.stream_replicas)


def table_events_stream(settings: Settings) -> StreamConfig:
    """Lobby/table lifecycle events (table.started, game.finished) for other services."""
    prefix = settings.key_prefix
    return StreamConfig(name=f"{prefix.upper()}_TABLES", subjects=[f"{prefix}.tables.>"],
                        duplicate_window=120.0, max_age=7 * 86_400.0,
                        num_replicas=settings.stream_replicas)


@dataclass
class Runtime:
    """Live connections of one process."""

    settings: Settings
    redis: aioredis.Redis
    nats: NATS
    js: JetStreamContext

    def key(self, *parts: str) -> str:
        """A Redis key in this deployment's namespace (each part checked: IdError)."""
        return ":".join((self.settings.key_prefix, *map(check_name_part, parts)))

    def subject(self, *parts: str) -> str:
        """A NATS subject in this deployment's namespace (each part checked: IdError)."""
        return ".".join((self.settings.key_prefix, *map(check_name_part, parts)))

    def subject_pattern(self, *parts: str) -> str:
        """A subject to subscribe to: like :meth:`subject`, but a part may be a wildcard token."""
        return ".".join((self.settings.key_prefix,
                         *(part if part in ("*", ">") else check_name_part(part) for part in parts)))


async def declare_streams(js: JetStreamContext, settings: Settings) -> None:
    """Create or update the JetStream streams the services rely on."""
    for config in (results_stream(settings), table_events_stream(settings)):
        try:
            await js.add_stream(config)
        except BadRequestError:
            await js.update_stream(config)


@asynccontextmanager
async def open_runtime(settings: Settings, name: str = "stammtisch") -> AsyncIterator[Runtime]:
    """Connect to Redis and NATS, declare streams; drain and close on exit."""
    # A blocking pool: a burst of calls (200 players subscribing as a tournament round starts)
    # waits for a connection instead of failing with "Too many connections".
    pool = aioredis.BlockingConnectionPool.from_url(settings.redis_url, max_connections=REDIS_CONNECTIONS,
                                                    timeout=REDIS_POOL_WAIT_SECONDS)
    redis = aioredis.Redis.from_pool(pool)  # owns the pool: aclose() closes its connections
    await redis.ping()
    nc = await nats.connect(servers=settings.nats_servers, name=name, max_reconnect_attempts=-1,
                            reconnect_time_wait=0.5)
    js = nc.jetstream()
    try:
        await declare_streams(js, settings)
        log.info("runtime_connected", redis=settings.redis_url, nats=settings.nats_url)
        yield Runtime(settings, redis, nc, js)
    finally:
        if not nc.is_closed:
            await nc.drain()
        await redis.aclose()
        log.info("runtime_closed")

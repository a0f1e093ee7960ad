"""Connections every service shares in one process: Redis, NATS and JetStream.

Opening the runtime declares the JetStream streams, so a fresh NATS server is usable at once;
closing it drains NATS and closes Redis. Both connections outlive their servers: NATS reconnects
forever (a protocol error from the server too) and replays its subscriptions; Redis commands are
retried a bounded number of times, safe because every write here is idempotent when re-sent
(shared/tables/store.py). A server away for longer fails calls with an :data:`UNREACHABLE` error,
which clients get as UNAVAILABLE. With ``STAMMTISCH_REDIS_CLUSTER=1`` the client is redis-py's
cluster client; every key and script keeps to one slot (shared/infra/shards.py).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from typing import Any

import nats.errors
import nats.js.errors
import redis.asyncio as aioredis
import redis.exceptions
from nats.aio.client import Client as NATS
from nats.js import JetStreamContext
from nats.js.api import StorageType, StreamConfig
from nats.js.errors import BadRequestError
from nats.protocol.parser import AUTHORIZATION_VIOLATION, PERMISSIONS_ERR
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff

from shared.config import Settings
from shared.ids import check_name_part
from shared.infra.credentials import login_of, without_login
from shared.infra.local_fanout import LocalFanout
from shared.infra.login_check import check_nats_login, check_redis_login
from shared.infra.redis_connections import CancellableConnection, ClusterConnection
from shared.infra.replicas import ReplicaWait
from shared.infra.shards import Shards
from shared.obs.logs import get_logger

log = get_logger("runtime")

#: Errors that mean a server is not reachable right now (not that the request was bad).
UNREACHABLE: tuple[type[Exception], ...] = (
    redis.exceptions.ConnectionError, redis.exceptions.TimeoutError,
    redis.exceptions.ClusterError, redis.exceptions.TryAgainError, redis.exceptions.SlotNotCoveredError,
    nats.errors.ConnectionClosedError, nats.errors.TimeoutError, nats.errors.NoServersError,
    nats.errors.OutboundBufferLimitError, nats.errors.StaleConnectionError,
    nats.errors.NoRespondersError, nats.js.errors.ServiceUnavailableError,
    nats.js.errors.NoStreamResponseError)

#: Redis: attempts after the first, and the backoff between them (about 1.5 s in all).
REDIS_RETRIES = 5
REDIS_BACKOFF = ExponentialBackoff(cap=0.8, base=0.05)
#: NATS: seconds between reconnect attempts (nats-py adds jitter), forever.
NATS_RECONNECT_WAIT = 0.5
#: Redis connections one process opens at most; more callers at once wait for one (a
#: tournament round starts 200 subscriptions at once: a bounded pool that fails would refuse them).
REDIS_CONNECTIONS = 256
#: How long a caller waits for a free Redis connection before the call fails.
REDIS_POOL_WAIT_SECONDS = 20.0
#: Redis keys a process keeps made (Runtime.key): a few per live table.
NAMES_KEPT = 65_536


def results_stream(settings: Settings) -> StreamConfig:
    """Durable round and game results (``<prefix>.results.<game>.round|game``);
    duplicates within 2 minutes are dropped by msg id."""
    prefix = settings.key_prefix
    return StreamConfig(name=f"{prefix.upper()}_RESULTS", subjects=[f"{prefix}.results.>"],
                        duplicate_window=120.0, max_age=30 * 86_400.0,
                        storage=StorageType.FILE, num_replicas=settings.stream_replicas)


def table_events_stream(settings: Settings) -> StreamConfig:
    """Lobby lifecycle events of tables (``<prefix>.tables.<table_id>.started|finished|closed``)
    for other services."""
    prefix = settings.key_prefix
    return StreamConfig(name=f"{prefix.upper()}_TABLES", subjects=[f"{prefix}.tables.>"],
                        duplicate_window=120.0, max_age=7 * 86_400.0,
                        storage=StorageType.FILE, num_replicas=settings.stream_replicas)


class ResilientNats(NATS):
    """A NATS client that answers a protocol error from the server by reconnecting (which replays the
    subscriptions) instead of closing for good: one odd publish must not leave the process without
    NATS. Authorization errors still close."""

    async def _process_err(self, err_msg: str) -> None:
        if AUTHORIZATION_VIOLATION in err_msg or PERMISSIONS_ERR in err_msg:
            await super()._process_err(err_msg)
            return
        error = nats.errors.Error(f"nats: {err_msg.strip(chr(39))}")
        log.warning("nats_protocol_error", error=str(error), action="reconnecting")
        self._err = error
        await self._process_op_err(error)


async def connect_nats(servers: list[str], name: str, no_echo: bool = False) -> NATS:
    """A NATS connection (to one server or a cluster) that reconnects forever and logs what
    happens to it. ``no_echo``: its own subscriptions never get what it publishes. The login of
    the URLs is given for every server, also those the cluster announces later (bare URLs)."""
    shown = without_login(",".join(servers))
    login = login_of(",".join(servers))

    async def on_error(error: Exception) -> None:
        log.warning("nats_error", error=repr(error))

    async def on_disconnected() -> None:
        log.warning("nats_disconnected", servers=shown)

    async def on_reconnected() -> None:
        log.info("nats_reconnected",
                 url=without_login(client.connected_url.geturl()) if client.connected_url else "")

    async def on_closed() -> None:
        log.info("nats_closed", servers=shown)

    client = ResilientNats()
    await client.connect(servers, name=name, max_reconnect_attempts=-1,
                         reconnect_time_wait=NATS_RECONNECT_WAIT,  # type: ignore[arg-type]
                         error_cb=on_error, disconnected_cb=on_disconnected,
                         reconnected_cb=on_reconnected, closed_cb=on_closed, no_echo=no_echo,
                         user=login.username if login else None, password=login.password if login else None)
    return client


#: Cluster mode: attempts after the first on a moved slot or a lost node, with the backoff
#: above between them; about five seconds in all, which covers a master's failover.
REDIS_CLUSTER_RETRIES = 10


def cluster_client(url: str, **options: Any) -> RedisCluster:
    """redis-py's cluster client seeded by ``url``, its connections :class:`ClusterConnection`."""
    client = RedisCluster.from_url(url, **options)
    client.nodes_manager.connection_kwargs["connection_class"] = ClusterConnection
    for node in client.nodes_manager.startup_nodes.values():
        node.connection_class = ClusterConnection
    return client


def connect_redis(url: str, cluster: bool = False) -> aioredis.Redis:
    """A Redis client whose commands ride out a short outage (bounded retries, then an error);
    ``cluster``: the cluster client seeded by ``url``, typed as the plain one because every command
    here keeps to one slot."""
    if cluster:
        client = cluster_client(
            url, max_connections=REDIS_CONNECTIONS, decode_responses=False,
            retry=Retry(REDIS_BACKOFF, REDIS_CLUSTER_RETRIES),
            health_check_interval=15, socket_timeout=5.0, socket_connect_timeout=2.0)
        return client  # type: ignore[return-value]
    pool = aioredis.BlockingConnectionPool.from_url(
        url, max_connections=REDIS_CONNECTIONS, timeout=REDIS_POOL_WAIT_SECONDS, decode_responses=False,
        connection_class=CancellableConnection,
        retry=Retry(REDIS_BACKOFF, REDIS_RETRIES),
        retry_on_error=[redis.exceptions.ConnectionError, redis.exceptions.TimeoutError],
        health_check_interval=15, socket_timeout=5.0, socket_connect_timeout=2.0)
    return aioredis.Redis.from_pool(pool)  # owns the pool: aclose() closes its connections


@dataclass
class Runtime:
    """Live connections of one process."""

    settings: Settings
    redis: aioredis.Redis
    nats: NATS
    js: JetStreamContext
    #: Live table news only: a connection without echo (shared/infra/local_fanout.py).
    live: NATS
    #: This process's commits, for this process's feeds.
    local_commits: LocalFanout = field(default_factory=LocalFanout)
    _claimed: set[str] = field(default_factory=set)
    #: Names made so far, by their parts: checking each part is most of a name's cost, and a
    #: commit alone makes seven keys (emptied when full: ids come from requests).
    _names: dict[tuple[str, ...], str] = field(default_factory=dict, repr=False)
    shards: Shards = field(init=False)
    replicas: ReplicaWait = field(init=False)

    def __post_init__(self) -> None:
        self.shards = Shards(self.settings.shard_count)
        self.replicas = ReplicaWait(self.redis, self.key("replicated"), self.settings.replica_wait_ms)

    def table_key(self, table_id: str, *parts: str) -> str:
        """A key of one table: in its shard's slot, beside the shard's indexes."""
        # Kept under its parts without the shard's tag (which they imply), behind a '.' that no
        # checked part has: never the parts of another key.
        made = (".table", table_id, *parts)
        key = self._names.get(made)
        if key is None:
            key = self._keep(made, self.key("table", self.shards.tag(self.shards.of(table_id)),
                                            table_id, *parts))
        return key

    def shard_key(self, index: str, shard: int, *parts: str) -> str:
        """A key of one shard of an index over tables (clocks, outbox, live tables)."""
        return self.key(index, self.shards.tag(shard), *parts)

    def key(self, *parts: str) -> str:
        """A Redis key in this deployment's namespace (each part checked: IdError)."""
        key = self._names.get(parts)
        if key is None:
            key = self._keep(parts, ":".join((self.settings.key_prefix, *map(check_name_part, parts))))
        return key

    def _keep(self, parts: tuple[str, ...], key: str) -> str:
        if len(self._names) >= NAMES_KEPT:
            self._names.clear()
        self._names[parts] = key
        return key

    def subject(self, *parts: str) -> str:
        """A NATS subject in this deployment's namespace (each part checked: IdError)."""
        return ".".join((self.settings.key_prefix, *map(check_name_part, parts)))

    def subject_pattern(self, *parts: str) -> str:
        """A subject to subscribe to: like :meth:`subject`, but a part may be a wildcard token."""
        return ".".join((self.settings.key_prefix,
                         *(part if part in ("*", ">") else check_name_part(part) for part in parts)))

    def claim(self, work: str) -> bool:
        """True for the first caller only: work one process does once, however many
        services it runs (such as relaying the results outbox)."""
        if work in self._claimed:
            return False
        self._claimed.add(work)
        return True


async def declare_streams(js: JetStreamContext, settings: Settings) -> None:
    """Create or update the JetStream streams the services rely on."""
    for config in (results_stream(settings), table_events_stream(settings)):
        try:
            await js.add_stream(config)
        except BadRequestError:
            await js.update_stream(config)


async def refuse_refused_logins(settings: Settings) -> None:
    """LoginRefused when Redis or NATS refuses the configured login (checked once, before the
    connections that retry: NATS would retry a refused login forever). A server that cannot be
    reached now is left to those connections."""
    with suppress(redis.exceptions.RedisError):
        await check_redis_login(settings.redis_url)
    with suppress(nats.errors.Error, OSError, TimeoutError):
        await check_nats_login(settings.nats_servers)


@asynccontextmanager
async def open_runtime(settings: Settings, name: str = "stammtisch") -> AsyncIterator[Runtime]:
    """Connect to Redis and NATS, declare streams; drain and close on exit. LoginRefused when a
    server refuses the configured login."""
    await refuse_refused_logins(settings)
    redis = connect_redis(settings.redis_url, settings.redis_cluster)
    await redis.ping()
    nc = await connect_nats(settings.nats_servers, name)
    live = await connect_nats(settings.nats_servers, f"{name}-live", no_echo=True)
    js = nc.jetstream()
    try:
        await declare_streams(js, settings)
        log.info("runtime_connected", redis=without_login(settings.redis_url),
                 nats=without_login(settings.nats_url))
        yield Runtime(settings, redis, nc, js, live)
    finally:
        for client in (live, nc):
            if client.is_reconnecting or client.is_connecting:
                await client.close()  # no server to drain to; waiting for one would hang the shutdown
            elif not client.is_closed:
                await client.drain()
        await redis.aclose()
        log.info("runtime_closed")

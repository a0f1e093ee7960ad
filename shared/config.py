"""Configuration from environment variables, with defaults for one machine.

Every process reads the same variables, so a service behaves the same in
`stammtisch up`, in a container and in Kubernetes.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from shared.infra.credentials import Login, with_login

#: The one list of services, name -> default gRPC port. Everything that names the services
#: reads it: the CLI's --service choices, the runner, the SDK's Endpoints, the launcher's
#: port variables, the deploy and fuzz tests. Adding a service means an entry here and a
#: package services/<name> with a ``service.py`` (and its manifests, which tests/deploy checks).
DEFAULT_PORTS: dict[str, int] = {"lobby": 50051, "engine": 50052, "arbiter": 50053, "scoring": 50054,
                                  "tournament": 50055, "clubs": 50056}
#: The services' names, in DEFAULT_PORTS order (the order of Endpoints and of `up`'s banner).
SERVICE_NAMES: tuple[str, ...] = tuple(DEFAULT_PORTS)
#: The largest answer a server sends and the SDK accepts: gRPC's default receive limit, which any
#: app has. Long answers come in parts below it: replays in pages (shared/archive/messages.py,
#: REPLAY_PAGE_BYTES), a stream's catch-up in batches of about 1 MiB at most.
MAX_REPLY_BYTES = 4 * 1024 * 1024

def _int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError as exc:
        raise ValueError(f"{name} must be an integer, got {raw!r}") from exc


def _float(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        return float(raw)
    except ValueError as exc:
        raise ValueError(f"{name} must be a number, got {raw!r}") from exc


def _flag(name: str) -> bool:
    """A switch: 1/true/yes/on or 0/false/no/off (unset or empty: off)."""
    raw = (os.environ.get(name) or "0").strip().lower()
    if raw in ("1", "true", "yes", "on"):
        return True
    if raw in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"{name} must be 1 or 0, got {raw!r}")


def _with_env_login(url: str, user_variable: str, password_variable: str) -> str:
    """``url`` carrying the login the environment gives (from a Secret; it wins over one in the
    URL), or as it is when the password variable is unset."""
    password = os.environ.get(password_variable) or ""
    user = os.environ.get(user_variable) or ""
    if not password:
        if user:
            raise ValueError(f"{user_variable} is set but {password_variable} is not")
        return url
    return with_login(url, Login(user, password))


def _positive(name: str, default: float) -> float:
    """A number of seconds above 0: a limit that could be switched off would not bound anything."""
    value = _float(name, default)
    if not value > 0:
        raise ValueError(f"{name} must be a number of seconds above 0, got {value!r}")
    return value


def _at_least_one(name: str, default: int) -> int:
    """A count above 0: a limit that could be switched off would not bound anything."""
    value = _int(name, default)
    if value < 1:
        raise ValueError(f"{name} must be a whole number above 0, got {value!r}")
    return value


@dataclass(frozen=True)
class Settings:
    """One process's settings; build with :meth:`from_env`."""

    #: Both URLs carry their login when the server wants one (``redis://user:password@host``;
    #: :meth:`from_env` puts STAMMTISCH_REDIS_USERNAME/PASSWORD and STAMMTISCH_NATS_USER/PASSWORD
    #: there): log them only through shared/infra/credentials.without_login.
    redis_url: str = "redis://127.0.0.1:6379/0"
    nats_url: str = "nats://127.0.0.1:4222"
    bind_host: str = "127.0.0.1"
    ports: dict[str, int] = field(default_factory=lambda: dict(DEFAULT_PORTS))
    metrics_port: int = 9100
    #: The tournament page's HTTP port, served by the tournament service (0: a free port).
    tournament_page_port: int = 8055
    key_prefix: str = "st"
    #: No built-in secret: `serve` refuses to start without one, `up` makes one (shared/rpc/token_secret.py).
    token_secret: str = ""
    #: The secret before the last rotation: its tokens are still accepted, new ones use token_secret.
    token_secret_previous: str = ""
    #: Lifetime of an access token of a device login (renewed with a refresh token).
    token_ttl_seconds: int = 900
    #: Lifetime of a guest login's token (guests have no refresh token).
    guest_token_ttl_seconds: int = 86_400
    #: A device login's refresh tokens expire this long after their last use.
    refresh_ttl_seconds: int = 30 * 86_400
    turn_seconds: float = 60.0
    log_level: str = "info"
    log_format: str = "json"
    grace_seconds: float = 5.0
    max_message_bytes: int = 64 * 1024
    actions_per_second: float = 50.0
    #: Token-less calls (Login, LoginDevice, RefreshToken, Logout) per peer address and minute
    #: (shared/rpc/login_limits.py): a bucket of this many, refilled at this many a minute.
    logins_per_minute: int = 600
    bot_delay_seconds: float = 0.8
    #: A running game in which no person acted for this long is closed (shared/tables/README.md).
    idle_close_seconds: float = 600.0
    #: A table with no game running closes this long after it was created or its last game ended.
    waiting_close_seconds: float = 1800.0
    #: Replicas of each JetStream stream (3 in a NATS cluster; at most the cluster's size).
    stream_replicas: int = 1
    #: Seconds between the server's keepalive pings on an idle connection; a client that
    #: answers none (its network vanished without a word) loses its streams.
    keepalive_seconds: float = 30.0
    #: The AOF fsync policy of a Redis that `stammtisch up` starts: everysec, always or off.
    redis_fsync: str = "everysec"
    #: REDIS_URL is a seed node of a Redis Cluster (redis-py's cluster client; shared/infra/shards.py).
    redis_cluster: bool = False
    #: Shards of the indexes over tables; 0: 16 in a cluster, 1 on a single Redis (shared/infra/shards.py).
    redis_shards: int = 0
    #: After a write that must survive a failover, wait this long for a replica to have it
    #: (Redis WAIT); -1: 500 in a cluster, 0 (no waiting) on a single Redis.
    redis_wait_ms: int = -1
    #: Several worker processes bind the same service ports (`stammtisch up --workers N`, set by
    #: services/host/workers.py). Otherwise a port already taken is an error, not shared with its owner.
    share_ports: bool = False
    #: Per table service (engine, arbiter), the port of each worker of `stammtisch up --workers N`
    #: where that worker alone serves it (shared/tables/placement.py); empty with one process.
    table_ports: dict[str, tuple[int, ...]] = field(default_factory=dict)
    #: Which of those workers this process is (its index in each tuple of ``table_ports``).
    worker_slot: int = 0
    #: The first of the workers' own table ports, one after another (0: free ports).
    table_port_base: int = 0
    #: The door's TLS port (`stammtisch up`; a free port when this one is taken).
    door_port: int = 8443
    #: Certificate chain and key (PEM files) of the door and of services that answer over TLS;
    #: empty: `stammtisch up` makes development ones in its data folder (shared/rpc/tls.py).
    tls_cert: str = ""
    tls_key: str = ""
    #: The CA certificate that signed the services' certificate (the door checks it); empty:
    #: the development CA, or the system's roots.
    tls_ca: str = ""
    #: The services answer over TLS themselves (with tls_cert/tls_key), not in plaintext.
    service_tls: bool = False
    #: Addresses or networks of proxies (the door) whose X-Real-IP header names the client.
    trusted_proxies: tuple[str, ...] = ()
    #: Calls at once per client address through the door (more: RESOURCE_EXHAUSTED).
    door_calls_per_address: int = 1000
    #: Seconds a new connection to the door may take to finish its TLS handshake and first request.
    door_header_seconds: float = 10.0
    #: Where the clubs service POSTs push notifications (services/clubs/README.md); empty: no push.
    push_gateway_url: str = ""
    #: Seconds after a decision becomes a player's before "your turn" is pushed (unless watching).
    your_turn_delay_seconds: float = 2.0
    #: Tables whose turn clock is at least this long are played by notification (reminders).
    notify_turn_seconds: float = 300.0
    #: How long before a club evening its members are told it starts (and check in).
    club_evening_notice_seconds: float = 900.0

    @property
    def shard_count(self) -> int:
        """How many shards the indexes over tables have."""
        return self.redis_shards or (16 if self.redis_cluster else 1)

    @property
    def replica_wait_ms(self) -> int:
        """Milliseconds to wait for a replica's copy of a write; 0: do not wait."""
        if self.redis_wait_ms >= 0:
            return self.redis_wait_ms
        return 500 if self.redis_cluster else 0

    @property
    def nats_servers(self) -> list[str]:
        """NATS_URL as a server list: one URL, or several comma-separated (a NATS cluster)."""
        return [url.strip() for url in self.nats_url.split(",") if url.strip()]

    @classmethod
    def from_env(cls) -> Settings:
        """Read every STAMMTISCH_* variable plus REDIS_URL and NATS_URL."""
        env = os.environ.get
        return cls(
            redis_url=_with_env_login(env("REDIS_URL") or cls.redis_url,
                                      "STAMMTISCH_REDIS_USERNAME", "STAMMTISCH_REDIS_PASSWORD"),
            nats_url=_with_env_login(env("NATS_URL") or cls.nats_url,
                                     "STAMMTISCH_NATS_USER", "STAMMTISCH_NATS_PASSWORD"),
            bind_host=env("STAMMTISCH_BIND") or cls.bind_host,
            ports={name: _int(f"STAMMTISCH_{name.upper()}_PORT", port)
                   for name, port in DEFAULT_PORTS.items()},
            metrics_port=_int("STAMMTISCH_METRICS_PORT", cls.metrics_port),
            tournament_page_port=_int("STAMMTISCH_TOURNAMENT_PAGE_PORT", cls.tournament_page_port),
            key_prefix=env("STAMMTISCH_KEY_PREFIX") or cls.key_prefix,
            token_secret=env("STAMMTISCH_TOKEN_SECRET") or cls.token_secret,
            token_secret_previous=env("STAMMTISCH_TOKEN_SECRET_PREVIOUS") or cls.token_secret_previous,
            token_ttl_seconds=_int("STAMMTISCH_TOKEN_TTL", cls.token_ttl_seconds),
            guest_token_ttl_seconds=_int("STAMMTISCH_GUEST_TOKEN_TTL", cls.guest_token_ttl_seconds),
            refresh_ttl_seconds=_int("STAMMTISCH_REFRESH_TTL", cls.refresh_ttl_seconds),
            turn_seconds=_float("STAMMTISCH_TURN_SECONDS", cls.turn_seconds),
            log_level=(env("STAMMTISCH_LOG_LEVEL") or cls.log_level).lower(),
            log_format=(env("STAMMTISCH_LOG_FORMAT") or cls.log_format).lower(),
            grace_seconds=_float("STAMMTISCH_GRACE_SECONDS", cls.grace_seconds),
            max_message_bytes=_int("STAMMTISCH_MAX_MESSAGE_BYTES", cls.max_message_bytes),
            actions_per_second=_float("STAMMTISCH_ACTIONS_PER_SECOND", cls.actions_per_second),
            logins_per_minute=_at_least_one("STAMMTISCH_LOGINS_PER_MINUTE", cls.logins_per_minute),
            bot_delay_seconds=_float("STAMMTISCH_BOT_DELAY", cls.bot_delay_seconds),
            idle_close_seconds=_positive("STAMMTISCH_IDLE_CLOSE_SECONDS", cls.idle_close_seconds),
            waiting_close_seconds=_positive("STAMMTISCH_WAITING_CLOSE_SECONDS",
                                            cls.waiting_close_seconds),
            stream_replicas=_int("STAMMTISCH_STREAM_REPLICAS", cls.stream_replicas),
            keepalive_seconds=_float("STAMMTISCH_KEEPALIVE_SECONDS", cls.keepalive_seconds),
            redis_fsync=(env("STAMMTISCH_REDIS_FSYNC") or cls.redis_fsync).lower(),
            redis_cluster=_flag("STAMMTISCH_REDIS_CLUSTER"),
            redis_shards=_int("STAMMTISCH_REDIS_SHARDS", cls.redis_shards),
            redis_wait_ms=_int("STAMMTISCH_REDIS_WAIT_MS", cls.redis_wait_ms),
            table_port_base=_int("STAMMTISCH_TABLE_PORT_BASE", cls.table_port_base),
            door_port=_int("STAMMTISCH_DOOR_PORT", cls.door_port),
            tls_cert=env("STAMMTISCH_TLS_CERT") or cls.tls_cert,
            tls_key=env("STAMMTISCH_TLS_KEY") or cls.tls_key,
            tls_ca=env("STAMMTISCH_TLS_CA") or cls.tls_ca,
            service_tls=_flag("STAMMTISCH_SERVICE_TLS"),
            trusted_proxies=tuple(item.strip() for item in
                                  (env("STAMMTISCH_TRUSTED_PROXIES") or "").split(",") if item.strip()),
            door_calls_per_address=_at_least_one("STAMMTISCH_DOOR_CALLS_PER_ADDRESS",
                                                 cls.door_calls_per_address),
            door_header_seconds=_positive("STAMMTISCH_DOOR_HEADER_SECONDS", cls.door_header_seconds),
            push_gateway_url=env("STAMMTISCH_PUSH_GATEWAY_URL") or cls.push_gateway_url,
            your_turn_delay_seconds=_float("STAMMTISCH_YOUR_TURN_DELAY", cls.your_turn_delay_seconds),
            notify_turn_seconds=_float("STAMMTISCH_NOTIFY_TURN_SECONDS", cls.notify_turn_seconds),
            club_evening_notice_seconds=_float("STAMMTISCH_CLUB_EVENING_NOTICE",
                                               cls.club_evening_notice_seconds),
        )

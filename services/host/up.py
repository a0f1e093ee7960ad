"""`stammtisch up` and `stammtisch serve`: the stack on one machine, or one service alone."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import uvloop

from services.host.door import Door, with_door
from services.host.heap import settle_heap
from services.host.runner import running_services, stop_on_signals
from services.host.workers import Ready, WorkerPool, shared_ports
from shared.config import Settings
from shared.infra.credentials import FILE_NAME as CREDENTIALS_FILE
from shared.infra.credentials import local_logins, login_of, without_login
from shared.infra.local import LocalServer, Supervisor, answers, free_port, start_nats, start_redis
from shared.infra.login_check import LoginRefused, nats_refusal, redis_refusal
from shared.obs.logs import configure_logging, get_logger
from shared.obs.looplag import watch_loop_lag
from shared.obs.metrics import serve_metrics
from shared.rpc.token_secret import require_token_secret, with_local_secret

log = get_logger("up")

def _port_or_free(preferred: int) -> int:
    return free_port() if answers(f"tcp://127.0.0.1:{preferred}") else preferred


@dataclass(frozen=True)
class _Kind:
    """Redis or NATS, as :func:`ensure_infra` treats both."""

    name: str
    variable: str
    login_variables: str
    default_port: int
    refusal: Callable[[str], str | None]


_REDIS = _Kind("redis", "REDIS_URL", "STAMMTISCH_REDIS_USERNAME/STAMMTISCH_REDIS_PASSWORD", 6379,
               redis_refusal)
_NATS = _Kind("nats", "NATS_URL", "STAMMTISCH_NATS_USER/STAMMTISCH_NATS_PASSWORD", 4222, nats_refusal)


def _use_configured(kind: _Kind, url: str) -> bool:
    """True when the configured server answers and admits its login; False when we start our own
    (nothing answers, or the URL has no login: an open server is never used). A server that
    refuses the configured login ends `up` with a message saying so."""
    shown = without_login(url)
    if not answers(url):
        log.info(f"{kind.name}_unreachable", url=shown, reason=f"nothing answers at {kind.variable}")
        return False
    if login_of(url) is None:
        log.warning(f"{kind.name}_not_used", url=shown,
                    reason=f"{kind.variable} carries no credentials (set {kind.login_variables}): "
                           "an open server is not used")
        return False
    refusal = kind.refusal(url)
    if refusal is not None:
        raise SystemExit(f"{kind.variable} {shown} refused the configured credentials ({refusal}): "
                         f"correct {kind.login_variables} (or the URL's user:password), or unset "
                         f"{kind.variable} to let `stammtisch up` start its own closed server")
    log.info(f"using_{kind.name}", url=shown, reason="it admits the configured credentials")
    return True


@contextlib.contextmanager
def ensure_infra(settings: Settings, data_dir: Path) -> Iterator[Settings]:
    """Use REDIS_URL/NATS_URL when they answer and admit their credentials; otherwise start our
    own, closed by the data folder's credentials (shared/infra/credentials.py), keep them running
    (a dead one is restarted on the same port and data) and stop them after."""
    started: list[LocalServer] = []
    try:
        if not _use_configured(_REDIS, settings.redis_url):
            logins = local_logins(data_dir)
            server = start_redis(_port_or_free(_REDIS.default_port), data_dir / "redis", logins.redis,
                                 settings.redis_fsync)
            started.append(server)
            settings = dataclasses.replace(settings, redis_url=server.url)
            log.info("started_redis", url=without_login(server.url), fsync=settings.redis_fsync,
                     credentials=str(data_dir / CREDENTIALS_FILE))
        if not _use_configured(_NATS, settings.nats_url):
            logins = local_logins(data_dir)
            server = start_nats(_port_or_free(_NATS.default_port), data_dir / "nats", logins.nats)
            started.append(server)
            settings = dataclasses.replace(settings, nats_url=server.url)
            log.info("started_nats", url=without_login(server.url),
                     credentials=str(data_dir / CREDENTIALS_FILE))
        with Supervisor(started):
            yield settings
    finally:
        for server in reversed(started):
            server.stop()
            log.info("stopped_local_server", name=server.name)


#: Called once the services are up, with what they serve: their ports and the metrics port.
OnReady = Callable[[Ready], None]


async def serve_until_stopped(settings: Settings, names: Sequence[str],
                              on_ready: OnReady | None = None) -> None:
    """Run the services until SIGTERM/SIGINT, then shut down gracefully."""
    stop = stop_on_signals()
    metrics_port = serve_metrics(settings.metrics_port, settings.bind_host)
    async with running_services(settings, names) as running:
        settle_heap()
        lag = asyncio.create_task(watch_loop_lag(), name="loop-lag")
        try:
            if on_ready is not None:
                on_ready({"services": [(item.service.name, item.port, item.service.full_name)
                                       for item in running], "metrics_port": metrics_port})
            await stop.wait()
            log.info("stopping", reason="signal")
        finally:
            lag.cancel()


def print_banner(settings: Settings, workers: Sequence[Ready], door: Door | None = None) -> None:
    """What `stammtisch up` serves, on stdout (services/host/launch.py reads it): first the door
    (``door grpcs://HOST:PORT``) and the CA certificate its clients trust (``ca PATH``), then the
    shared service ports, each worker's metrics port (``metrics``, ``metrics2``, ...) and, with
    several workers, their own table ports (shared/tables/placement.py)."""
    host = settings.bind_host
    if door is not None:
        print(f"door {door.address}\nca {door.ca or '(the system roots)'}", flush=True)
    pids = ", ".join(str(worker["pid"]) for worker in workers)
    print(f"Stammtisch is up ({len(workers)} worker{'s' if len(workers) > 1 else ''}, pid {pids}):",
          flush=True)
    scheme = "grpcs" if settings.service_tls else "grpc"
    labels = ["metrics" if number == 1 else f"metrics{number}" for number in range(1, len(workers) + 1)]
    page = ["tournaments"] if any(name == "tournament" for name, _, _ in workers[0]["services"]) else []
    width = max(len(name) for name in [*labels, *page, *(name for name, _, _ in workers[0]["services"])])
    for name, port, full_name in workers[0]["services"]:
        print(f"  {name:<{width}} {scheme}://{host}:{port}  ({full_name})", flush=True)
        if name == "tournament":  # its page (services/tournament/page.py)
            print(f"  {'tournaments':<{width}} http://{host}:{settings.tournament_page_port}/tournaments",
                  flush=True)
    for label, worker in zip(labels, workers, strict=True):
        print(f"  {label:<{width}} http://{host}:{worker['metrics_port']}/metrics  (pid {worker['pid']})",
              flush=True)
    for name, ports in settings.table_ports.items():
        print(f"  {name:<{width}} tables placed on each worker's own port: "
              f"{', '.join(str(port) for port in ports)}", flush=True)
    print(f"  {'redis':<{width}} {without_login(settings.redis_url)}\n"
          f"  {'nats':<{width}} {without_login(settings.nats_url)}", flush=True)
    print("Press Ctrl-C to stop.", flush=True)


def _prepare(settings: Settings) -> None:
    configure_logging(settings.log_level, settings.log_format)


def up(names: Sequence[str], workers: int = 1) -> int:
    """The whole stack behind its door, with Redis and NATS started if needed (on uvloop): in this
    process, or in ``workers`` forked processes sharing the ports (services/host/workers.py)."""
    settings = Settings.from_env()
    _prepare(settings)
    data_dir = Path(os.environ.get("STAMMTISCH_DATA_DIR", ".var")).resolve()
    settings = require_token_secret(with_local_secret(settings, data_dir))
    with ensure_infra(settings, data_dir) as infra:
        ready = with_door(infra, data_dir)
        with Door(ready, data_dir) as door:
            if workers <= 1:
                def opened(info: Ready) -> None:
                    door.open(ready, {name: port for name, port, _ in info["services"]})
                    print_banner(ready, [{"pid": os.getpid(), **info}], door)

                uvloop.run(serve_until_stopped(ready, names, opened))
                return 0
            shared, metrics_ports = shared_ports(ready, workers)

            def body(worker_settings: Settings, report: OnReady) -> None:
                uvloop.run(serve_until_stopped(worker_settings, names, report))

            pool = WorkerPool(body, shared, metrics_ports)
            pool.stop_on_signals()
            try:
                started = pool.start()
                door.open(shared, {name: shared.ports[name] for name in names})
                print_banner(shared, started, door)
                pool.supervise()
            finally:
                pool.stop(shared.grace_seconds + 10)
            log.info("stopped", workers=workers)
    return 0


def serve(names: Sequence[str]) -> int:
    """Named services against the configured Redis and NATS (containers, Kubernetes)."""
    settings = require_token_secret(Settings.from_env())
    _prepare(settings)
    try:
        uvloop.run(serve_until_stopped(settings, names))
    except LoginRefused as refused:
        raise SystemExit(str(refused)) from None
    return 0

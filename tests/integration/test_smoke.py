"""The stack as a user runs it: `stammtisch up` in a subprocess, health over real gRPC."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from shared.localinfra import answers, free_port

pytestmark = pytest.mark.integration

STAMMTISCH = str(Path(sys.executable).parent / "stammtisch")


def _start_up(env_overrides: dict[str, str], data_dir: Path) -> subprocess.Popen[str]:
    ports = {f"STAMMTISCH_{name}_PORT": str(free_port())
             for name in ("LOBBY", "ENGINE", "ARBITER", "SCORING")}
    env = {**os.environ, **ports, "STAMMTISCH_METRICS_PORT": str(free_port()),
           "STAMMTISCH_KEY_PREFIX": "smoke" + str(os.getpid()),
           "STAMMTISCH_DATA_DIR": str(data_dir), "STAMMTISCH_GRACE_SECONDS": "1",
           **env_overrides}
    return subprocess.Popen([STAMMTISCH, "up"], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _read_banner(proc: subprocess.Popen[str], timeout: float = 30.0) -> dict[str, str]:
    """Parse 'name grpc://host:port' lines until 'Press Ctrl-C'."""
    endpoints: dict[str, str] = {}
    deadline = time.monotonic() + timeout
    assert proc.stdout is not None
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        found = re.match(r"\s+(\w+)\s+(grpc|http|redis|nats)://(\S+)", line)
        if found:
            endpoints[found.group(1)] = found.group(3)
        if line.startswith("Press Ctrl-C"):
            return endpoints
    proc.kill()
    raise AssertionError(f"stack did not come up: {proc.stderr.read() if proc.stderr else ''}")


def _health(address: str) -> int:
    with grpc.insecure_channel(address) as channel:
        reply = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(),
                                                          timeout=5)
    return int(reply.status)


def _stop(proc: subprocess.Popen[str]) -> str:
    proc.send_signal(signal.SIGTERM)
    _out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    return err


def test_up_serves_health_on_every_service_and_stops_on_sigterm(
        infra: tuple[str, str], tmp_path: Path) -> None:
    redis_url, nats_url = infra
    proc = _start_up({"REDIS_URL": redis_url, "NATS_URL": nats_url}, tmp_path)
    try:
        endpoints = _read_banner(proc)
        for name in ("lobby", "engine", "arbiter", "scoring"):
            assert _health(endpoints[name]) == health_pb2.HealthCheckResponse.SERVING, name
        with urllib.request.urlopen(f"http://{endpoints['metrics']}/metrics", timeout=5) as page:
            metrics = page.read().decode()
        assert "stammtisch_rpc_duration_seconds" in metrics
    finally:
        err = _stop(proc)
    assert '"event": "runtime_closed"' in err
    for name in ("lobby", "engine", "arbiter", "scoring"):
        assert not answers("tcp://" + endpoints[name]), f"{name} still listening"


def test_up_starts_and_stops_its_own_redis_and_nats_when_none_answer(tmp_path: Path) -> None:
    dead_redis = f"redis://127.0.0.1:{free_port()}/0"
    dead_nats = f"nats://127.0.0.1:{free_port()}"
    proc = _start_up({"REDIS_URL": dead_redis, "NATS_URL": dead_nats}, tmp_path)
    own: list[str] = []
    try:
        endpoints = _read_banner(proc)
        assert endpoints["redis"] != dead_redis.split("://")[1]
        assert _health(endpoints["engine"]) == health_pb2.HealthCheckResponse.SERVING
        own += [f"tcp://{endpoints['redis']}", f"tcp://{endpoints['nats']}"]
        assert all(answers(url) for url in own)
    finally:
        err = _stop(proc)
    assert "started_redis" in err and "started_nats" in err
    assert not any(answers(url) for url in own), "own Redis/NATS left running"
    assert (tmp_path / "redis").is_dir() and (tmp_path / "nats").is_dir()

"""The stack as a user runs it: `stammtisch up` in a subprocess, health over real gRPC."""

from __future__ import annotations

import urllib.request
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from services.host.launch import start_stack
from shared.config import SERVICE_NAMES
from shared.infra.local import answers, free_port

pytestmark = pytest.mark.integration


def _health(address: str) -> int:
    with grpc.insecure_channel(address) as channel:
        reply = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=5)
    return int(reply.status)


def test_up_serves_health_on_every_service_and_stops_on_sigterm(
        infra: tuple[str, str], tmp_path: Path) -> None:
    redis_url, nats_url = infra
    stack = start_stack({"REDIS_URL": redis_url, "NATS_URL": nats_url}, tmp_path)
    try:
        for name in SERVICE_NAMES:
            assert _health(stack.endpoints[name]) == health_pb2.HealthCheckResponse.SERVING, name
        with urllib.request.urlopen(f"http://{stack.endpoints['metrics']}/metrics", timeout=5) as page:
            assert "stammtisch_rpc_duration_seconds" in page.read().decode()
    finally:
        err = stack.stop()
    assert stack.process.returncode == 0, err
    assert '"event": "runtime_closed"' in err
    for name in SERVICE_NAMES:
        assert not answers("tcp://" + stack.endpoints[name]), f"{name} still listening"


def test_up_starts_and_stops_its_own_redis_and_nats_when_none_answer(tmp_path: Path) -> None:
    dead_redis = f"redis://127.0.0.1:{free_port()}/0"
    dead_nats = f"nats://127.0.0.1:{free_port()}"
    stack = start_stack({"REDIS_URL": dead_redis, "NATS_URL": dead_nats}, tmp_path)
    own = [f"tcp://{stack.endpoints['redis']}", f"tcp://{stack.endpoints['nats']}"]
    try:
        assert stack.endpoints["redis"] != dead_redis.split("://")[1]
        assert _health(stack.endpoints["engine"]) == health_pb2.HealthCheckResponse.SERVING
        assert all(answers(url) for url in own)
    finally:
        err = stack.stop()
    assert stack.process.returncode == 0, err
    assert "started_redis" in err and "started_nats" in err
    assert not any(answers(url) for url in own), "own Redis/NATS left running"
    assert (tmp_path / "redis").is_dir() and (tmp_path / "nats").is_dir()

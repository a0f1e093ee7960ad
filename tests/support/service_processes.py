"""Each Stammtisch service in its own `stammtisch serve` process, as in compose or Kubernetes.

Not a test module. One process per service gives Prometheus one target per
`component`, so the per-component alerts can be seen going down one by one.
"""

from __future__ import annotations

import contextlib
import secrets
import subprocess
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from services.host.healthcheck import check
from services.host.launch import STAMMTISCH, stack_env
from shared.config import SERVICE_NAMES
from shared.infra.local import LocalServer, free_port
from shared.sdk.client import Endpoints


@dataclass
class ServiceProcesses:
    """The running processes by service, their gRPC endpoints and metrics ports."""

    processes: dict[str, LocalServer]
    endpoints: Endpoints
    metrics_ports: dict[str, int]


def _wait_serving(service: str, address: str, process: subprocess.Popen[bytes], log: Path,
                  timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{service} exited at start: {log.read_text()[-2000:]}")
        if check(service, address, timeout=1.0):
            return
        time.sleep(0.2)
    raise RuntimeError(f"{service} was not SERVING within {timeout}s: {log.read_text()[-2000:]}")


@contextlib.contextmanager
def service_processes(overrides: Mapping[str, str], log_dir: Path) -> Iterator[ServiceProcesses]:
    """Every service, one `stammtisch serve --service NAME` each, on free ports."""
    log_dir.mkdir(parents=True, exist_ok=True)
    # `serve` has no built-in token secret; the lobby signs what the others verify.
    env = stack_env({"STAMMTISCH_TOKEN_SECRET": secrets.token_urlsafe(32), **overrides}, log_dir)
    ports = {name: int(env[f"STAMMTISCH_{name.upper()}_PORT"]) for name in SERVICE_NAMES}
    metrics_ports = {name: free_port() for name in SERVICE_NAMES}
    addresses = {name: f"127.0.0.1:{port}" for name, port in ports.items()}
    processes: dict[str, LocalServer] = {}
    try:
        for name in SERVICE_NAMES:
            with (log_dir / f"{name}.log").open("wb") as out:
                processes[name] = LocalServer(name, f"grpc://{addresses[name]}", subprocess.Popen(
                    [STAMMTISCH, "serve", "--service", name],
                    env={**env, "STAMMTISCH_METRICS_PORT": str(metrics_ports[name])},
                    stdout=out, stderr=subprocess.STDOUT))
        for name, server in processes.items():
            _wait_serving(name, addresses[name], server.process, log_dir / f"{name}.log")
        yield ServiceProcesses(processes, Endpoints(**addresses), metrics_ports)
    finally:
        for server in processes.values():
            server.stop()

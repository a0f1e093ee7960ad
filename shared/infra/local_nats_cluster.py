"""A throw-away NATS JetStream cluster on free local ports (three servers by default).

For tests and experiments with replicated streams: every server gets a
client port, a route port, a monitoring port, its own store and a
``server_name``; all share one cluster name and solicit routes to each other.
The servers are child processes, stopped (and reaped) on exit.
"""

from __future__ import annotations

import contextlib
import json
import signal
import subprocess
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from shared.infra.local import LocalServer, binary, free_port


@dataclass
class ClusterNode:
    """One server of the cluster and the ports it was given (kept for a restart)."""

    name: str
    client_port: int
    route_port: int
    http_port: int
    data_dir: Path
    server: LocalServer | None = None

    @property
    def url(self) -> str:
        """The client URL."""
        return f"nats://127.0.0.1:{self.client_port}"


@dataclass
class LocalCluster:
    """The running cluster; ``url`` is the comma-separated list NATS_URL takes."""

    cluster_name: str
    nodes: list[ClusterNode]

    @property
    def url(self) -> str:
        """Every node's client URL, comma-separated."""
        return ",".join(node.url for node in self.nodes)

    def node(self, name: str) -> ClusterNode:
        """The node with this ``server_name``."""
        (found,) = [node for node in self.nodes if node.name == name]
        return found

    def start(self, node: ClusterNode, timeout: float = 30.0) -> None:
        """Start (or restart, on its old store) one node; returns once it answers."""
        routes = ",".join(f"nats://127.0.0.1:{other.route_port}" for other in self.nodes
                          if other is not node)
        node.data_dir.mkdir(parents=True, exist_ok=True)
        log = node.data_dir / "nats.log"
        process = subprocess.Popen(
            [binary("nats-server"), "-a", "127.0.0.1", "-p", str(node.client_port),
             "-m", str(node.http_port), "--server_name", node.name,
             "--cluster_name", self.cluster_name,
             "--cluster", f"nats://127.0.0.1:{node.route_port}", "--routes", routes,
             "-js", "-sd", str(node.data_dir / "jetstream"), "-l", str(log)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        node.server = LocalServer(node.name, node.url, process)
        wait_until(lambda: process.poll() is None and _http_ok(node, "/varz"), timeout,
                    f"{node.name} did not start; see {log}")

    def kill(self, node: ClusterNode) -> None:
        """SIGKILL: the server dies as in a crash (no lame-duck mode, no clean shutdown)."""
        assert node.server is not None
        node.server.process.send_signal(signal.SIGKILL)
        node.server.process.wait()

    def wait_ready(self, timeout: float = 60.0) -> None:
        """Until every running node reports JetStream healthy (a meta leader is known)."""
        running = [node for node in self.nodes if node.server and node.server.process.poll() is None]
        wait_until(lambda: all(_http_ok(node, "/healthz") for node in running), timeout,
                    "the JetStream cluster did not become healthy")

    def stream_leader(self, stream: str) -> str:
        """The ``server_name`` leading a stream, as a running node's monitoring sees it."""
        for node in self.nodes:
            if node.server is None or node.server.process.poll() is not None:
                continue
            with urllib.request.urlopen(
                    f"http://127.0.0.1:{node.http_port}/jsz?streams=true", timeout=2) as reply:
                info = json.load(reply)
            for account in info.get("account_details", []):
                for detail in account.get("stream_detail", []):
                    if detail["name"] == stream and detail.get("cluster", {}).get("leader"):
                        return str(detail["cluster"]["leader"])
        raise LookupError(f"no leader known for stream {stream}")

    def stop(self) -> None:
        """Stop every node that still runs."""
        for node in self.nodes:
            if node.server is not None:
                node.server.stop()


def _http_ok(node: ClusterNode, path: str) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{node.http_port}{path}", timeout=1) as reply:
            return bool(reply.status == 200)
    except OSError:
        return False


def wait_until(probe: Callable[[], bool], timeout: float, failure: str) -> None:
    """Poll ``probe`` until it says yes; RuntimeError(``failure``) after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if probe():
            return
        time.sleep(0.1)
    raise RuntimeError(failure)


@contextlib.contextmanager
def local_cluster(data_dir: Path, size: int = 3, name: str = "stammtisch") -> Iterator[LocalCluster]:
    """A healthy JetStream cluster of ``size`` servers for as long as the block runs."""
    cluster = LocalCluster(name, [
        ClusterNode(f"n{index}", free_port(), free_port(), free_port(), data_dir / f"n{index}")
        for index in range(1, size + 1)])
    try:
        for node in cluster.nodes:
            cluster.start(node)
        cluster.wait_ready()
        yield cluster
    finally:
        cluster.stop()

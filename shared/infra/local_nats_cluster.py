"""A throw-away NATS JetStream cluster on free local ports (three servers by default).

For tests and experiments with replicated streams: every server gets a
client port, a route port, a monitoring port, its own store and a
``server_name``; all share one cluster name and solicit routes to each other.
Clients need the cluster's :attr:`LocalCluster.login` and so do the routes
between the servers (a second login): both are in each server's config file
(mode 0600), not on its command line.
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
from dataclasses import dataclass, field
from pathlib import Path

from shared.infra.credentials import NATS_USER, Login, with_login, write_private
from shared.infra.local import LocalServer, binary, free_port, nats_auth_config


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
    def address(self) -> str:
        """The client URL without a login (what a log may show)."""
        return f"nats://127.0.0.1:{self.client_port}"


@dataclass
class LocalCluster:
    """The running cluster; ``url`` is the comma-separated list NATS_URL takes."""

    cluster_name: str
    nodes: list[ClusterNode]
    #: The login clients connect with.
    login: Login = field(default_factory=lambda: Login.fresh(NATS_USER))
    #: The login the servers' routes to each other use.
    route_login: Login = field(default_factory=lambda: Login.fresh("route"))

    @property
    def url(self) -> str:
        """Every node's client URL with the login, comma-separated."""
        return with_login(",".join(node.address for node in self.nodes), self.login)

    def node_url(self, node: ClusterNode) -> str:
        """One node's client URL with the login."""
        return with_login(node.address, self.login)

    def config(self, node: ClusterNode) -> Path:
        """The node's config file: who may connect as a client, and as a route."""
        route = self.route_login
        routes = ",".join(with_login(f"nats://127.0.0.1:{other.route_port}", route)
                          for other in self.nodes if other is not node)
        cluster = ("cluster {\n"
                   f"  name: {json.dumps(self.cluster_name)}\n"
                   f"  listen: \"127.0.0.1:{node.route_port}\"\n"
                   f"  authorization {{user: {json.dumps(route.username)}, "
                   f"password: {json.dumps(route.password)}}}\n"
                   f"  routes: {json.dumps(routes.split(','))}\n"
                   "}\n")
        return write_private(node.data_dir / "nats.conf", nats_auth_config(self.login) + cluster)

    def node(self, name: str) -> ClusterNode:
        """The node with this ``server_name``."""
        (found,) = [node for node in self.nodes if node.name == name]
        return found

    def start(self, node: ClusterNode, timeout: float = 30.0) -> None:
        """Start (or restart, on its old store) one node; returns once it answers."""
        node.data_dir.mkdir(parents=True, exist_ok=True)
        log = node.data_dir / "nats.log"
        process = subprocess.Popen(
            [binary("nats-server"), "-c", str(self.config(node)), "-a", "127.0.0.1",
             "-p", str(node.client_port), "-m", str(node.http_port), "--server_name", node.name,
             "-js", "-sd", str(node.data_dir / "jetstream"), "-l", str(log)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        node.server = LocalServer(node.name, self.node_url(node), process)
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

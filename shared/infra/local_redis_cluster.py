"""A throw-away Redis Cluster on free local ports (three masters, optionally a replica each).

For tests and experiments with ``STAMMTISCH_REDIS_CLUSTER=1``: every node is a
``redis-server --cluster-enabled yes`` child process with its own folder
(nodes.conf, log; by default no persistence: a killed master's replica takes
over, the way a cluster survives a crash) and its cluster bus on a free port
of its own rather than port + 10000; ``redis-cli --cluster create`` joins
them. A short ``cluster-node-timeout`` makes a failover take a second or two.
Every node wants the cluster's :attr:`LocalRedisCluster.login` (in its config file,
mode 0600; replicas use it towards their master, redis-cli gets it by environment).
Nodes are stopped (and reaped) on exit, also when starting failed half way.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from shared.infra.credentials import Login, with_login, write_private
from shared.infra.local import REDIS_FSYNC, LocalServer, binary, free_port, redis_auth_config
from shared.infra.local_nats_cluster import wait_until

#: Milliseconds a master may be silent before its replica takes over.
NODE_TIMEOUT_MS = 1000


@dataclass
class RedisNode:
    """One redis-server of the cluster and its port (kept for a restart)."""

    port: int
    bus_port: int
    data_dir: Path
    server: LocalServer | None = None

    @property
    def address(self) -> str:
        """host:port, as redis-cli and CLUSTER NODES name it."""
        return f"127.0.0.1:{self.port}"

    @property
    def alive(self) -> bool:
        """The process runs."""
        return self.server is not None and self.server.alive


@dataclass
class LocalRedisCluster:
    """The running cluster; ``url`` is one seed node (REDIS_URL in cluster mode)."""

    nodes: list[RedisNode]
    replicas: int
    #: The AOF fsync policy of every node, or "off" (no persistence).
    fsync: str = "off"
    #: The one login every node admits.
    login: Login = field(default_factory=Login.fresh)

    @property
    def persistence(self) -> list[str]:
        """redis-server options for :attr:`fsync`."""
        if self.fsync == "off":
            return ["--appendonly", "no"]
        return ["--appendonly", "yes", "--appendfsync", self.fsync]

    @property
    def url(self) -> str:
        """A seed node's URL with the login (the cluster client learns the others from it)."""
        return with_login(f"redis://{self.nodes[0].address}/0", self.login)

    def start(self, node: RedisNode) -> None:
        """Start (or restart, with its old nodes.conf) one node."""
        node.data_dir.mkdir(parents=True, exist_ok=True)
        log = node.data_dir / "redis.log"
        config = write_private(node.data_dir / "redis.conf", redis_auth_config(self.login))
        command = [binary("redis-server"), str(config), "--port", str(node.port), "--bind", "127.0.0.1",
                   "--cluster-enabled", "yes", "--cluster-port", str(node.bus_port),
                   "--cluster-config-file", "nodes.conf",
                   "--cluster-node-timeout", str(NODE_TIMEOUT_MS), "--save", "", *self.persistence,
                   "--dir", str(node.data_dir), "--logfile", str(log)]
        node.server = LocalServer.launch(f"redis-cluster-{node.port}",
                                         with_login(f"redis://{node.address}/0", self.login), command, log)

    def create(self) -> None:
        """Join the nodes into a cluster (slots spread over the masters) and wait until it is ok."""
        subprocess.run([*self._redis_cli(), "--cluster", "create", *(n.address for n in self.nodes),
                        "--cluster-replicas", str(self.replicas), "--cluster-yes"],
                       check=True, capture_output=True, timeout=60, env=self._cli_env())
        self.wait_ok()

    def cli(self, node: RedisNode, *args: str) -> str:
        """A redis-cli command on one node; its output ("" when the node does not answer)."""
        try:
            done = subprocess.run([*self._redis_cli(), "-p", str(node.port), *args], check=True,
                                  capture_output=True, timeout=10, text=True, env=self._cli_env())
        except subprocess.SubprocessError:
            return ""
        return done.stdout

    def _redis_cli(self) -> list[str]:
        return [binary("redis-cli"), *(["--user", self.login.username] if self.login.username else [])]

    def _cli_env(self) -> dict[str, str]:
        """redis-cli's environment: the password by REDISCLI_AUTH, not on its command line."""
        return {**os.environ, "REDISCLI_AUTH": self.login.password}

    def masters(self) -> list[RedisNode]:
        """The running nodes that serve slots as masters now, as a running node sees it."""
        by_address = {node.address: node for node in self.nodes if node.alive}
        for node in by_address.values():
            found = []
            for line in self.cli(node, "cluster", "nodes").splitlines():
                fields = line.split()
                address, flags = fields[1].split("@")[0], fields[2]
                serving = "master" in flags and "fail" not in flags and len(fields) > 8
                if serving and address in by_address:
                    found.append(by_address[address])
            return found
        raise LookupError("no node of the cluster runs")

    def wait_ok(self, timeout: float = 60.0) -> None:
        """Until every running node says ``cluster_state:ok``, every slot is served, and every
        master has its replicas in sync (as many as the cluster was made with, while that many
        nodes run)."""

        def ok() -> bool:
            running = [node for node in self.nodes if node.alive]
            for node in running:
                info = self.cli(node, "cluster", "info")
                if "cluster_state:ok" not in info or "cluster_slots_ok:16384" not in info:
                    return False
            masters = self.masters()
            wanted = min(self.replicas, len(running) // max(len(masters), 1) - 1)
            return all(_in_sync(self.cli(master, "info", "replication")) >= wanted for master in masters)

        wait_until(ok, timeout, "the Redis Cluster did not become ok")

    def wait_failed_over(self, dead: RedisNode, timeout: float = 60.0) -> None:
        """Until the cluster has marked the dead node failed and serves every slot again
        (its replica promoted in its place)."""

        def failed() -> bool:
            for line in self.cli(next(n for n in self.nodes if n.alive), "cluster", "nodes").splitlines():
                fields = line.split()
                if fields[1].split("@")[0] == dead.address:
                    return "fail" in fields[2].split(",") and len(fields) <= 8
            return False

        wait_until(failed, timeout, f"{dead.address} was not failed over")
        self.wait_ok(timeout)

    def replace(self, dead: RedisNode) -> None:
        """Start an empty node on the dead one's ports as the replica of the master that took over its
        slots: empty, because a node restarted on its nodes.conf would claim its slots as a master with
        no data in them until the cluster told it otherwise."""
        running = [node for node in self.nodes if node.alive]
        old_id = self.cli(running[0], "cluster", "nodes")
        for path in dead.data_dir.glob("nodes.conf"):
            path.unlink()
        self.start(dead)
        new_id = self.cli(dead, "cluster", "myid").strip()
        self.cli(dead, "cluster", "meet", "127.0.0.1", str(running[0].port), str(running[0].bus_port))
        wait_until(lambda: new_id in self.cli(running[0], "cluster", "nodes"), 30.0,
                   "the new node did not join")
        orphans: list[str] = []

        def orphaned() -> bool:
            orphans[:] = self._masters_without_replica(running[0])
            return bool(orphans) and orphans[0] in self.cli(dead, "cluster", "nodes")

        wait_until(orphaned, 30.0, "no master without a replica, as the new node knows the cluster")
        self.cli(dead, "cluster", "replicate", orphans[0])
        for line in old_id.splitlines():  # forget the dead node's old identity everywhere
            fields = line.split()
            if fields[1].split("@")[0] == dead.address and fields[0] != new_id:
                for node in running:
                    self.cli(node, "cluster", "forget", fields[0])
        self.wait_ok()

    def _masters_without_replica(self, seen_by: RedisNode) -> list[str]:
        """The ids of masters serving slots that no live replica follows, as ``seen_by`` sees it."""
        lines = [line.split() for line in self.cli(seen_by, "cluster", "nodes").splitlines()]
        followed = {fields[3] for fields in lines if "slave" in fields[2] and "fail" not in fields[2]}
        return [fields[0] for fields in lines
                if "master" in fields[2] and "fail" not in fields[2] and len(fields) > 8
                and fields[0] not in followed]

    def kill(self, node: RedisNode) -> None:
        """SIGKILL: the node dies as in a crash."""
        assert node.server is not None
        node.server.kill()

    def stop(self) -> None:
        """Stop every node that still runs."""
        for node in self.nodes:
            if node.server is not None:
                node.server.stop()


def _in_sync(replication: str) -> int:
    """Replicas of a master (INFO replication) that are online."""
    return sum(1 for line in replication.splitlines()
               if line.startswith("slave") and "state=online" in line)


def _start_on_free_ports(cluster: LocalRedisCluster, node: RedisNode, attempts: int = 3) -> None:
    """Start a new node; if it exits at once (a port that was free is taken meanwhile by
    another process of this busy machine), again on other free ports."""
    for attempt in range(attempts):
        try:
            cluster.start(node)
            return
        except RuntimeError:
            if attempt == attempts - 1:
                raise
            node.port, node.bus_port = free_port(), free_port()


@contextlib.contextmanager
def local_redis_cluster(data_dir: Path, masters: int = 3, replicas: int = 0,
                        fsync: str = "off") -> Iterator[LocalRedisCluster]:
    """A Redis Cluster of ``masters`` masters with ``replicas`` replicas each, while the block runs
    (``fsync``: each node's AOF policy, as for shared/infra/local.start_redis)."""
    if fsync not in REDIS_FSYNC:
        raise ValueError(f"Redis fsync must be one of {REDIS_FSYNC}, got {fsync!r}")
    cluster = LocalRedisCluster([RedisNode(free_port(), free_port(), data_dir / f"r{index}")
                                 for index in range(masters * (1 + replicas))], replicas, fsync)
    try:
        for node in cluster.nodes:
            _start_on_free_ports(cluster, node)
        cluster.create()
        yield cluster
    finally:
        cluster.stop()

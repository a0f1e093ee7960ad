"""The Redis clients' connections: cancellations and timeouts reach the caller; on a cluster, a socket
closed under a call is a ConnectionError."""

from __future__ import annotations

import asyncio

import pytest
import redis.exceptions

from shared.infra.redis_connections import CancellableConnection, ClusterConnection
from shared.infra.runtime import connect_redis


async def test_a_connection_closed_under_a_call_is_a_connection_error() -> None:
    connection = ClusterConnection(host="127.0.0.1", port=1)  # never connected: no socket
    with pytest.raises(redis.exceptions.ConnectionError, match="closed while in use"):
        await connection._send_packed_command([b"*1\r\n$4\r\nPING\r\n"])


async def test_every_node_of_the_cluster_client_uses_it() -> None:
    client: redis.asyncio.cluster.RedisCluster = connect_redis(  # type: ignore[assignment]
        "redis://127.0.0.1:1/0", cluster=True)
    try:
        assert client.nodes_manager.connection_kwargs["connection_class"] is ClusterConnection
        assert {node.connection_class for node in client.nodes_manager.startup_nodes.values()} == {
            ClusterConnection}
    finally:
        await client.aclose()


class _StuckWriter:
    """A socket writer whose buffer never drains (a peer that stopped reading)."""

    def writelines(self, data: object) -> None:
        pass

    async def drain(self) -> None:
        await asyncio.Event().wait()

    def close(self) -> None:
        pass

    async def wait_closed(self) -> None:
        pass


async def test_a_write_that_outlasts_the_socket_timeout_is_a_redis_timeout() -> None:
    connection = CancellableConnection(host="127.0.0.1", port=1, socket_timeout=0.05)
    connection._reader, connection._writer = object(), _StuckWriter()  # type: ignore[assignment]
    with pytest.raises(redis.exceptions.TimeoutError, match="Timeout writing"):
        await connection.send_packed_command(b"*1\r\n$4\r\nPING\r\n", check_health=False)
    assert connection.socket_timeout == 0.05  # reads keep their limit


def test_the_plain_client_and_every_cluster_node_use_cancellable_connections() -> None:
    client = connect_redis("redis://127.0.0.1:1/0")
    assert client.connection_pool.connection_class is CancellableConnection
    assert issubclass(ClusterConnection, CancellableConnection)


@pytest.mark.parametrize("args", [
    ("PING",),
    ("SCRIPT LOAD", "return 1"),
    ("EVALSHA", "a" * 40, 2, "k:{s}:head", b"k:{s}:log", 41, b"\x00\xffblob" * 700, 1.5, -3, "äöü"),
    ("SET", "k", memoryview(b"view"), bytearray(b"array")),
])
def test_hiredis_packs_a_command_as_redis_py_does(args: tuple[object, ...]) -> None:
    ours = b"".join(CancellableConnection().pack_command(*args))
    theirs = b"".join(redis.asyncio.Connection().pack_command(*args))
    assert ours == theirs


def test_a_value_redis_has_no_form_for_is_a_data_error() -> None:
    with pytest.raises(redis.exceptions.DataError):
        CancellableConnection().pack_command("SET", "k", None)

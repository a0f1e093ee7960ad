"""The cluster client's connections: a socket closed under a call is a ConnectionError."""

from __future__ import annotations

import pytest
import redis.exceptions

from shared.runtime import _ClusterConnection, connect_redis


async def test_a_connection_closed_under_a_call_is_a_connection_error() -> None:
    connection = _ClusterConnection(host="127.0.0.1", port=1)  # never connected: no socket
    with pytest.raises(redis.exceptions.ConnectionError, match="closed while in use"):
        await connection._send_packed_command([b"*1\r\n$4\r\nPING\r\n"])


async def test_every_node_of_the_cluster_client_uses_it() -> None:
    client: redis.asyncio.cluster.RedisCluster = connect_redis(  # type: ignore[assignment]
        "redis://127.0.0.1:1/0", cluster=True)
    try:
        assert client.nodes_manager.connection_kwargs["connection_class"] is _ClusterConnection
        assert {node.connection_class for node in client.nodes_manager.startup_nodes.values()} == {
            _ClusterConnection}
    finally:
        await client.aclose()

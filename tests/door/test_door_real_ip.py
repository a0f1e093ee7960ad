"""The client's own address reaches the services through the door (X-Real-IP), believed only
from trusted proxies: the per-address login limit (shared/rpc/login_limits.py) still tells
clients apart behind the door."""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest

from shared.api.stammtisch.v1 import lobby_pb2
from shared.config import Settings
from shared.sdk.client import Endpoints, StammtischClient
from tests.support.door import client_from, door_in_front

pytestmark = pytest.mark.integration
LOGINS = 3


async def _logins_until_refused(client: StammtischClient, tries: int) -> int:
    """Logins that succeed before the first RESOURCE_EXHAUSTED (``tries`` if none is refused)."""
    for done in range(tries):
        try:
            await client.login(f"p{done}")
        except grpc.aio.AioRpcError as err:
            assert err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, err
            return done
    return tries


async def test_one_address_exhausting_its_logins_does_not_block_another(
        settings: Settings, tmp_path: Path) -> None:
    async with door_in_front(settings, tmp_path, logins_per_minute=LOGINS) as opened:
        async with client_from(opened, "127.0.0.2") as greedy:
            assert await _logins_until_refused(greedy, LOGINS + 2) == LOGINS
        async with client_from(opened, "127.0.0.3") as other:
            assert await _logins_until_refused(other, LOGINS) == LOGINS


async def test_the_header_is_believed_only_from_a_trusted_proxy(settings: Settings, tmp_path: Path) -> None:
    """With the door not among the trusted proxies every client is the door's address; and a
    client that names another address itself is not believed either."""
    async with door_in_front(settings, tmp_path, logins_per_minute=LOGINS,
                             trusted_proxies=("192.0.2.1",)) as opened:
        async with client_from(opened, "127.0.0.2") as greedy:
            assert await _logins_until_refused(greedy, LOGINS + 2) == LOGINS
        async with client_from(opened, "127.0.0.3") as other:
            assert await _logins_until_refused(other, 1) == 0
        lobby = next(item.port for item in opened.running if item.service.name == "lobby")
        async with StammtischClient(Endpoints.on_host("127.0.0.1", {**opened.settings.ports,
                                                                     "lobby": lobby})) as direct:
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await direct.lobby.Login(lobby_pb2.LoginRequest(name="spoof"),
                                         metadata=(("x-real-ip", "198.51.100.7"),))
        assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED

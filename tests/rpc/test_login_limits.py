"""Token-less calls are rate-limited per peer address (real gRPC, Redis and NATS).

Before the limit, Login, LoginDevice and RefreshToken were not limited at all: the
per-player limiter keys on a token's player, which these calls do not have, so
an anonymous caller could run scrypt (LoginDevice) as often as it liked.
"""

from __future__ import annotations

import dataclasses

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from prometheus_client import REGISTRY

from shared.api.stammtisch.v1 import lobby_pb2
from shared.config import Settings
from shared.sdk.client import StammtischClient
from tests.support.stack import quick_stack

pytestmark = pytest.mark.integration

LIMIT = 4


def _refused_logins(method: str) -> float:
    return REGISTRY.get_sample_value("stammtisch_rpc_duration_seconds_count", {
        "service": "lobby", "method": method, "code": "RESOURCE_EXHAUSTED"}) or 0.0


async def test_logins_from_one_address_beyond_the_limit_are_refused_and_counted(settings: Settings) -> None:
    limited = dataclasses.replace(settings, logins_per_minute=LIMIT)
    refused_before = _refused_logins("LoginDevice")
    async with quick_stack(limited) as ends, StammtischClient(ends) as phone, \
            StammtischClient(ends) as other:
        # One bucket per address for every token-less call, whichever client or method spends it.
        await phone.login_device("phone-0001", "s3cret-of-the-phone-0001", "Anna")
        await phone.refresh()
        await other.login("Bruno")
        await other.login("Bruno")
        for call in (phone.login_device("phone-0001", "s3cret-of-the-phone-0001"),
                     phone.refresh(), other.login("Carla")):
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await call
            assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "too many logins from your address" in (refused.value.details() or "")
        assert _refused_logins("LoginDevice") == refused_before + 1

        # Calls with a token are the per-player limiter's business, and health stays free.
        assert (await other.lobby.ListTables(lobby_pb2.ListTablesRequest(), metadata=other.auth)) is not None
        async with grpc.aio.insecure_channel(ends.lobby) as channel:
            health = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest())
        assert health.status == health_pb2.HealthCheckResponse.SERVING


async def test_the_default_limit_lets_a_load_test_register_its_bots(settings: Settings) -> None:
    """`stammtisch loadtest --tournament --players 200` logs in 201 clients from one host at once."""
    assert settings.logins_per_minute == Settings().logins_per_minute
    async with quick_stack(settings) as ends:
        clients = [StammtischClient(ends) for _ in range(201)]
        try:
            for index, client in enumerate(clients):
                await client.login(f"load-{index}")
            assert all(client.auth for client in clients)
        finally:
            for client in clients:
                await client.close()

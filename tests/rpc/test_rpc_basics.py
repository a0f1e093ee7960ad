"""Every service over real gRPC: auth, clear status codes, health, reflection, limits."""

from __future__ import annotations

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from shared.api.stammtisch.v1 import (
    arbiter_pb2,
    arbiter_pb2_grpc,
    engine_pb2,
    engine_pb2_grpc,
    lobby_pb2,
    lobby_pb2_grpc,
    scoring_pb2,
    scoring_pb2_grpc,
)

pytestmark = pytest.mark.integration


async def _login(address: str, name: str = "Anna") -> tuple[str, str]:
    async with grpc.aio.insecure_channel(address) as channel:
        reply = await lobby_pb2_grpc.LobbyServiceStub(channel).Login(
            lobby_pb2.LoginRequest(name=name))
    return reply.token, reply.player_id


async def test_every_service_reports_serving(stack: dict[str, str]) -> None:
    for name, address in stack.items():
        async with grpc.aio.insecure_channel(address) as channel:
            stub = health_pb2_grpc.HealthStub(channel)
            for service in ("", f"stammtisch.v1.{name.capitalize()}Service"):
                reply = await stub.Check(health_pb2.HealthCheckRequest(service=service))
                assert reply.status == health_pb2.HealthCheckResponse.SERVING, (name, service)


async def test_reflection_lists_the_service(stack: dict[str, str]) -> None:
    async with grpc.aio.insecure_channel(stack["lobby"]) as channel:
        stub = reflection_pb2_grpc.ServerReflectionStub(channel)
        responses = stub.ServerReflectionInfo(iter([reflection_pb2.ServerReflectionRequest(
            list_services="")]))
        names = [s.name async for r in responses for s in r.list_services_response.service]
    assert "stammtisch.v1.LobbyService" in names


async def test_login_gives_a_token_and_refuses_bad_names(stack: dict[str, str]) -> None:
    token, player_id = await _login(stack["lobby"])
    assert token and len(player_id) == 32
    async with grpc.aio.insecure_channel(stack["lobby"]) as channel:
        stub = lobby_pb2_grpc.LobbyServiceStub(channel)
        for bad in ("", " ", "x" * 25, "a\x00b"):
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await stub.Login(lobby_pb2.LoginRequest(name=bad))
            assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT


@pytest.mark.parametrize("metadata", [None, (("authorization", "Bearer nonsense"),)])
async def test_calls_without_a_valid_token_are_unauthenticated(
        stack: dict[str, str], metadata: tuple[tuple[str, str], ...] | None) -> None:
    async with grpc.aio.insecure_channel(stack["engine"]) as channel:
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await engine_pb2_grpc.EngineServiceStub(channel).GetView(
                engine_pb2.GetViewRequest(table_id="x"), metadata=metadata)
    assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED


async def test_oversized_messages_are_refused_cleanly(stack: dict[str, str]) -> None:
    async with grpc.aio.insecure_channel(stack["lobby"]) as channel:
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await lobby_pb2_grpc.LobbyServiceStub(channel).Login(
                lobby_pb2.LoginRequest(name="x" * 200_000))
    assert info.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED


async def test_every_method_answers_with_a_clear_status(stack: dict[str, str]) -> None:
    """Each RPC either works or fails with a deliberate code, never INTERNAL/UNKNOWN."""
    token, _ = await _login(stack["lobby"])
    auth = (("authorization", f"Bearer {token}"),)
    calls = [
        (stack["engine"], engine_pb2_grpc.EngineServiceStub, "GetView",
         engine_pb2.GetViewRequest(table_id="nope")),
        (stack["arbiter"], arbiter_pb2_grpc.ArbiterServiceStub, "GetView",
         arbiter_pb2.ArbiterServiceGetViewRequest(table_id="nope")),
        (stack["scoring"], scoring_pb2_grpc.ScoringServiceStub, "GetLeaderboard",
         scoring_pb2.GetLeaderboardRequest()),
    ]
    for address, stub_class, method, request in calls:
        async with grpc.aio.insecure_channel(address) as channel:
            try:
                await getattr(stub_class(channel), method)(request, metadata=auth)
            except grpc.aio.AioRpcError as err:
                assert err.code() not in (grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN), \
                    (method, err.code(), err.details())
                assert err.details()

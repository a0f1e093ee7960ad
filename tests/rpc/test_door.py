"""The door, over real gRPC against real Redis and NATS: who may come in, and with what.

Forged or oddly shaped tokens, odd ids in requests and undecodable bytes each
get a clear status (never INTERNAL or UNKNOWN), and none of them can break the
process's NATS connection for everyone else.
"""

from __future__ import annotations

import asyncio
import dataclasses
import re
import secrets
import subprocess
import time
from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import grpc
import jwt
import pytest
import structlog
from grpc_health.v1 import health_pb2, health_pb2_grpc
from prometheus_client import REGISTRY

from services.host.runner import running_services
from shared.api.stammtisch.v1 import arbiter_pb2, engine_pb2, lobby_pb2, lobby_pb2_grpc, scoring_pb2
from shared.config import Settings
from shared.ids import new_player_id
from shared.rpc.auth import key_id
from shared.sdk.client import Endpoints, StammtischClient
from tests.support.stack import logged_in

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
Metadata = tuple[tuple[str, str], ...]
STICH = lobby_pb2.QuickMatchRequest(game="willi-stich", seats=3)


def _bearer(token: str) -> Metadata:
    return (("authorization", f"Bearer {token}"),)


def _forged(secret: str, sub: Any, kid: str | None = "of-secret", **claims: Any) -> str:
    """A token signed with ``secret`` for any subject (what a holder of the secret could make)."""
    now = int(time.time())
    headers = {} if kid is None else {"kid": key_id(secret) if kid == "of-secret" else kid}
    return jwt.encode({"sub": sub, "name": "Mallory", "iat": now, "exp": now + 600, **claims},
                      secret, algorithm="HS256", headers=headers)


def _client(stack: dict[str, str]) -> StammtischClient:
    return StammtischClient(Endpoints.of(stack))


async def _code(call: Awaitable[Any]) -> grpc.StatusCode:
    try:
        await call
    except grpc.aio.AioRpcError as err:
        assert err.details(), err.code()
        return err.code()
    return grpc.StatusCode.OK


async def _stream_code(call: Any) -> grpc.StatusCode:
    async def drain() -> None:
        async for _ in call:
            return

    return await _code(drain())


@asynccontextmanager
async def _channel(address: str) -> AsyncIterator[grpc.aio.Channel]:
    async with grpc.aio.insecure_channel(address) as channel:
        yield channel


async def _quick_match_works(stack: dict[str, str]) -> None:
    """Three fresh players are matched into one Willi Stich table (QuickMatch uses NATS)."""
    async with logged_in(Endpoints.of(stack), "P0", "P1", "P2") as clients:
        matched = await asyncio.wait_for(
            asyncio.gather(*(client.quick_match("willi-stich", 3) for client in clients)), 20)
    assert len({table.table_id for table, _seat in matched}) == 1
    assert sorted(seat for _table, seat in matched) == [0, 1, 2]


# -- tokens -------------------------------------------------------------------------------------


@pytest.mark.parametrize("sub", ["x" * 5000, "f" * 4200])
async def test_a_huge_player_id_in_a_validly_signed_token_is_refused_and_nats_survives(
        stack: dict[str, str], settings: Settings, sub: str) -> None:
    token = _forged(settings.token_secret, sub)
    async with _client(stack) as mallory:
        assert await _stream_code(mallory.lobby.QuickMatch(STICH, metadata=_bearer(token))) \
            == grpc.StatusCode.UNAUTHENTICATED
    await _quick_match_works(stack)


@pytest.mark.parametrize("sub", ["", " ", "a b", "a\r\nb", "\r\n", "ab\x00", new_player_id() + "\n",
                                 "player.one", "*", ">", new_player_id().upper()])
async def test_odd_player_ids_in_signed_tokens_are_unauthenticated(
        stack: dict[str, str], settings: Settings, sub: str) -> None:
    metadata = _bearer(_forged(settings.token_secret, sub))
    async with _client(stack) as mallory:
        codes = [await _stream_code(mallory.lobby.QuickMatch(STICH, metadata=metadata)),
                 await _code(mallory.lobby.CreateTable(
                     lobby_pb2.CreateTableRequest(game="willi-stich", seats=3), metadata=metadata)),
                 await _code(mallory.engine.GetView(engine_pb2.GetViewRequest(table_id="t1"),
                                                    metadata=metadata))]
    assert codes == [grpc.StatusCode.UNAUTHENTICATED] * 3
    await _quick_match_works(stack)


@pytest.mark.parametrize("claims", [{"exp": float("nan")}, {"exp": float("inf")}, {"exp": "9999999999"},
                                    {"exp": None}, {"iat": None}])
async def test_tokens_that_never_expire_are_unauthenticated(
        stack: dict[str, str], settings: Settings, claims: dict[str, Any]) -> None:
    token = _forged(settings.token_secret, new_player_id(), **claims)
    async with _client(stack) as mallory:
        call = mallory.lobby.ListTables(lobby_pb2.ListTablesRequest(), metadata=_bearer(token))
        assert await _code(call) == grpc.StatusCode.UNAUTHENTICATED


def _code_base_literals() -> list[str]:
    """Every quoted string in the repository's code, configuration and docs, once each."""
    listed = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True)
    files = [REPO / name for name in listed.stdout.split()
             if name.endswith((".py", ".yml", ".yaml", ".toml", ".md")) or name.endswith("Makefile")]
    quoted = re.compile(r'"((?:[^"\\\n]|\\.)*)"|\'((?:[^\'\\\n]|\\.)*)\'')
    found = {match.group(1) if match.group(1) is not None else match.group(2)
             for path in files if path.exists()
             for match in quoted.finditer(path.read_text(errors="replace"))}
    return sorted(literal for literal in found if literal)


@pytest.mark.filterwarnings("ignore::jwt.warnings.InsecureKeyLengthWarning")
async def test_no_string_of_the_code_base_signs_a_token_the_server_accepts(
        stack: dict[str, str], settings: Settings) -> None:
    """The server runs with a random secret; a secret anywhere in the repository would show here."""
    literals = _code_base_literals()
    assert len(literals) > 500 and "STAMMTISCH_TOKEN_SECRET" in literals
    server_kid = key_id(settings.token_secret)
    tokens = [_forged(literal, new_player_id(), kid=kid)
              for literal in literals for kid in ("of-secret", server_kid, None)]
    async with _client(stack) as mallory:
        lobby = mallory.lobby
        codes: list[grpc.StatusCode] = []
        for start in range(0, len(tokens), 200):
            codes += await asyncio.gather(*(
                _code(lobby.ListTables(lobby_pb2.ListTablesRequest(), metadata=_bearer(token)))
                for token in tokens[start:start + 200]))
        control = await _code(lobby.ListTables(lobby_pb2.ListTablesRequest(), metadata=_bearer(
            _forged(settings.token_secret, new_player_id()))))
    print(f"{len(literals)} literals, {len(tokens)} tokens tried")
    assert set(codes) == {grpc.StatusCode.UNAUTHENTICATED}
    assert control == grpc.StatusCode.OK, "the server's own secret does sign"


async def test_login_and_health_ignore_an_attached_token(stack: dict[str, str], settings: Settings) -> None:
    expired = _forged(settings.token_secret, new_player_id(), iat=1000, exp=2000)
    for token in ("garbage", expired, "x" * 5000):
        async with _client(stack) as client, _channel(stack["lobby"]) as channel:
            reply = await client.lobby.Login(lobby_pb2.LoginRequest(name="Anna"), metadata=_bearer(token))
            health = await health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(), metadata=_bearer(token))
        assert reply.token and len(reply.player_id) == 32
        assert health.status == health_pb2.HealthCheckResponse.SERVING


# -- ids in requests ------------------------------------------------------------------------------

ODD_TABLE_IDS = ["", " ", "a b", "t\r\n", "t\n", "x" * 5000, "a.b", "*", ">", "t\x00", "tä"]


#: Methods that answer with a stream.
STREAMING = {"WatchTable", "Subscribe"}


def _table_requests(table_id: str) -> list[tuple[str, str, Any]]:
    """(service, method, request) for every RPC that takes a table id."""
    return [
        ("lobby", "GetTable", lobby_pb2.GetTableRequest(table_id=table_id)),
        ("lobby", "JoinTable", lobby_pb2.JoinTableRequest(table_id=table_id)),
        ("lobby", "LeaveTable", lobby_pb2.LeaveTableRequest(table_id=table_id)),
        ("lobby", "SetReady", lobby_pb2.SetReadyRequest(table_id=table_id)),
        ("lobby", "AddBot", lobby_pb2.AddBotRequest(table_id=table_id)),
        ("lobby", "SendChat", lobby_pb2.SendChatRequest(table_id=table_id, text="hi")),
        ("lobby", "WatchTable", lobby_pb2.WatchTableRequest(table_id=table_id)),
        ("engine", "GetView", engine_pb2.GetViewRequest(table_id=table_id)),
        ("engine", "Act", engine_pb2.ActRequest(table_id=table_id, action_id="a1")),
        ("engine", "Subscribe", engine_pb2.SubscribeRequest(table_id=table_id)),
        ("arbiter", "GetView", arbiter_pb2.ArbiterServiceGetViewRequest(table_id=table_id)),
        ("arbiter", "Act", arbiter_pb2.ArbiterServiceActRequest(table_id=table_id, action_id="a1")),
        ("arbiter", "Subscribe", arbiter_pb2.ArbiterServiceSubscribeRequest(table_id=table_id)),
        ("scoring", "GetTableResults", scoring_pb2.GetTableResultsRequest(table_id=table_id)),
    ]


@pytest.mark.parametrize("table_id", ODD_TABLE_IDS)
async def test_odd_table_ids_are_invalid_arguments_everywhere(stack: dict[str, str], table_id: str) -> None:
    async with _client(stack) as client:
        await client.login("Anna")
        codes = {}
        for service, method, request in _table_requests(table_id):
            started = getattr(getattr(client, service), method)(request, metadata=client.auth)
            codes[(service, method)] = await (_stream_code(started) if method in STREAMING
                                              else _code(started))
    assert {key: code for key, code in codes.items() if code != grpc.StatusCode.INVALID_ARGUMENT} == {}
    await _quick_match_works(stack)


async def test_a_player_id_that_is_not_of_the_shape_is_invalid_for_scoring(stack: dict[str, str]) -> None:
    async with _client(stack) as client:
        await client.login("Anna")
        for odd in ("nobody", "x" * 5000, "a b", new_player_id() + "\r\n"):
            call = client.scoring.GetPlayerStats(scoring_pb2.GetPlayerStatsRequest(player_id=odd),
                                                 metadata=client.auth)
            assert await _code(call) == grpc.StatusCode.INVALID_ARGUMENT, odd
        own = await client.scoring.GetPlayerStats(scoring_pb2.GetPlayerStatsRequest(), metadata=client.auth)
    assert list(own.per_game) == []


# -- undecodable bytes ------------------------------------------------------------------------------


def _bad_requests(service: str, method: str) -> float:
    return REGISTRY.get_sample_value("stammtisch_bad_requests_total",
                                     {"service": service, "method": method}) or 0.0


async def test_undecodable_bytes_are_invalid_arguments_logged_once_and_counted(stack: dict[str, str]) -> None:
    async with _client(stack) as client:
        await client.login("Anna")
        before = {key: _bad_requests(*key) for key in
                  [("lobby", "Login"), ("engine", "Subscribe"), ("lobby", "ServerReflectionInfo")]}
        with structlog.testing.capture_logs([structlog.contextvars.merge_contextvars]) as logs:
            async with _channel(stack["lobby"]) as lobby, _channel(stack["engine"]) as engine:
                login = lobby.unary_unary("/stammtisch.v1.LobbyService/Login")
                subscribe = engine.unary_stream("/stammtisch.v1.EngineService/Subscribe")
                reflect = lobby.stream_stream(
                    "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo")
                codes = [await _code(login(b"\xff\xff\xff")),
                         await _code(login(b"\xff\xff\xff", metadata=_bearer("garbage"))),
                         await _stream_code(subscribe(b"\x0a\xff\xff\xff\x0f", metadata=client.auth)),
                         await _stream_code(subscribe(b"\xff", metadata=())),
                         await _stream_code(reflect(iter([b"\xff\xff\xff"])))]
    assert codes == [grpc.StatusCode.INVALID_ARGUMENT] * 3 + [grpc.StatusCode.UNAUTHENTICATED,
                                                              grpc.StatusCode.INVALID_ARGUMENT]
    assert _bad_requests("lobby", "Login") - before[("lobby", "Login")] == 2
    assert _bad_requests("engine", "Subscribe") - before[("engine", "Subscribe")] == 1
    assert _bad_requests("lobby", "ServerReflectionInfo") - before[("lobby", "ServerReflectionInfo")] == 1
    undecodable = [line for line in logs if "undecodable" in line]
    assert len(undecodable) == 4, logs
    assert [line["method"] for line in undecodable] == [
        "/stammtisch.v1.LobbyService/Login", "/stammtisch.v1.LobbyService/Login",
        "/stammtisch.v1.EngineService/Subscribe",
        "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo"]
    assert {line["log_level"] for line in undecodable} == {"info"}
    assert {line["code"] for line in undecodable} == {"INVALID_ARGUMENT"}
    assert not [line for line in logs if line["log_level"] in ("error", "critical")], logs


async def test_a_rotated_secret_is_accepted_while_it_is_the_previous_one_and_refused_after(
        settings: Settings) -> None:
    old, new, newest = (secrets.token_urlsafe(32) for _ in range(3))
    token = _forged(old, new_player_id())
    codes = []
    for current, previous in ((old, ""), (new, old), (newest, new)):
        rotated = dataclasses.replace(settings, token_secret=current, token_secret_previous=previous)
        async with running_services(rotated, ["lobby"]) as (lobby,), \
                _channel(f"127.0.0.1:{lobby.port}") as channel:
            call = lobby_pb2_grpc.LobbyServiceStub(channel).ListTables(
                lobby_pb2.ListTablesRequest(), metadata=_bearer(token))
            codes.append(await _code(call))
    assert codes == [grpc.StatusCode.OK, grpc.StatusCode.OK, grpc.StatusCode.UNAUTHENTICATED]


async def test_a_request_id_is_kept_only_when_it_looks_like_one(stack: dict[str, str]) -> None:
    with structlog.testing.capture_logs([structlog.contextvars.merge_contextvars]) as logs:
        async with _client(stack) as client:
            for request_id in ("req-1:a.b_c", "x" * 5000, "a b", "{\"forged\": 1}"):
                await client.lobby.Login(lobby_pb2.LoginRequest(name="Anna"),
                                         metadata=(("x-request-id", request_id),))
    ids = [line["request_id"] for line in logs if line["event"] == "rpc"]
    assert ids[0] == "req-1:a.b_c"
    assert len(ids) == 4 and all(re.fullmatch(r"[0-9a-f]{32}", request_id) for request_id in ids[1:])

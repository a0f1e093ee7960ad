"""Bad input at the door, through a real nginx: each gets a clear refusal or a closed connection,
and other clients and the services go on."""

from __future__ import annotations

import asyncio
import socket
import ssl
import time
from pathlib import Path

import grpc
import pytest

from shared.api.stammtisch.v1 import lobby_pb2
from shared.config import SERVICE_NAMES, Settings
from shared.rpc.tls import development_certificates
from shared.sdk.client import Endpoints, RefusedAction, StammtischClient
from tests.support.door import OpenDoor, client_from, door_in_front
from tests.support.stack import bot_table, close_all, same_player

pytestmark = pytest.mark.integration


async def _still_serves(opened: OpenDoor) -> None:
    """A well-behaved client logs in and lists the games through the door."""
    async with StammtischClient(opened.endpoints) as client:
        await client.login("still-here")
        assert await client.games()


async def test_plaintext_http2_on_the_tls_port_is_refused(settings: Settings, tmp_path: Path) -> None:
    async with door_in_front(settings, tmp_path) as opened:
        async with StammtischClient(Endpoints.of(dict.fromkeys(SERVICE_NAMES, opened.address))) as plain:
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await asyncio.wait_for(plain.games(), 10)
        assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
        await _still_serves(opened)


async def test_a_client_that_does_not_trust_the_ca_cannot_connect(settings: Settings, tmp_path: Path) -> None:
    other_ca = development_certificates(tmp_path / "other-ca", ["127.0.0.1"]).ca
    async with door_in_front(settings, tmp_path / "stack") as opened:
        async with StammtischClient(Endpoints.door(opened.address, other_ca)) as stranger:
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await asyncio.wait_for(stranger.games(), 10)
        assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
        await _still_serves(opened)


async def test_an_unknown_service_is_unimplemented(settings: Settings, tmp_path: Path) -> None:
    async with door_in_front(settings, tmp_path) as opened:
        ends = opened.endpoints
        async with grpc.aio.secure_channel(ends.lobby, ends.credentials()) as channel:
            for path in ("/no.such.Service/Call", "/stammtisch.v1.NoService/Get", "/"):
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    await channel.unary_unary(path)(b"")
                assert refused.value.code() == grpc.StatusCode.UNIMPLEMENTED, path
        await _still_serves(opened)


async def test_an_oversized_message_is_refused_and_the_connection_goes_on(
        settings: Settings, tmp_path: Path) -> None:
    async with door_in_front(settings, tmp_path) as opened:
        async with StammtischClient(opened.endpoints) as client:
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await client.lobby.Login(lobby_pb2.LoginRequest(name="x" * (settings.max_message_bytes + 1)))
            assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            await client.login("anna")  # the same connection
            table_id = await bot_table(client, "willi", 4, turn_seconds=0)
            async with client.play(table_id) as stream:
                with pytest.raises(grpc.aio.AioRpcError) as cut:
                    await stream.act({"type": "x" * (settings.max_message_bytes + 1)})
                assert cut.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        await _still_serves(opened)


def _closed_within(sock: socket.socket | ssl.SSLSocket, seconds: float) -> float:
    """Seconds until the peer closes ``sock`` (which sends nothing); fails after ``seconds``."""
    start = time.monotonic()
    sock.settimeout(seconds)
    try:
        while sock.recv(4096):
            pass
    except ConnectionResetError:
        pass
    return time.monotonic() - start


async def test_a_connection_that_sends_nothing_is_closed(settings: Settings, tmp_path: Path) -> None:
    async with door_in_front(settings, tmp_path, door_header_seconds=1.0) as opened:
        host, port = opened.address.rsplit(":", 1)
        context = ssl.create_default_context(cafile=opened.door.ca)
        context.set_alpn_protocols(["h2"])

        def silent_clients() -> tuple[float, float]:
            with socket.create_connection((host, int(port))) as raw:
                no_handshake = _closed_within(raw, 10)
            with socket.create_connection((host, int(port))) as raw, \
                    context.wrap_socket(raw, server_hostname=host) as tls:
                no_request = _closed_within(tls, 10)
            return no_handshake, no_request

        no_handshake, no_request = await asyncio.to_thread(silent_clients)
        assert no_handshake < 10 and no_request < 10
        await _still_serves(opened)


async def test_a_flood_of_connections_from_one_address_is_refused_and_others_go_on(
        settings: Settings, tmp_path: Path) -> None:
    """Twelve connections from one address, each with a call that stays open, against a limit of
    five calls at once per address: the rest get RESOURCE_EXHAUSTED; another address goes on."""
    async with door_in_front(settings, tmp_path, door_calls_per_address=5) as opened:
        async with StammtischClient(opened.endpoints) as owner:
            await owner.login("flood")
            table = await owner.create_table("willi", 4)
            flood = [same_player(owner, opened.endpoints) for _ in range(12)]  # a connection each
            try:
                watches = [client.lobby.WatchTable(lobby_pb2.WatchTableRequest(table_id=table.table_id),
                                                   metadata=client.auth) for client in flood]
                outcomes = await asyncio.gather(*(_first_answer(watch) for watch in watches))
                assert outcomes.count(grpc.StatusCode.RESOURCE_EXHAUSTED) >= 7, outcomes
                assert grpc.StatusCode.OK in outcomes
                async with client_from(opened, "127.0.0.2") as neighbour:
                    await neighbour.login("neighbour")
                    assert await neighbour.games()
            finally:
                await close_all(flood)
        await _still_serves(opened)


async def _first_answer(call: grpc.aio.UnaryStreamCall) -> grpc.StatusCode:
    """OK once the call's first answer arrives, else the code it ended with."""
    try:
        await asyncio.wait_for(call.read(), 10)
    except grpc.aio.AioRpcError as err:
        return err.code()
    return grpc.StatusCode.OK


async def test_a_play_stream_outlasts_any_body_size_limit(settings: Settings, tmp_path: Path) -> None:
    """nginx counts a streaming request's whole body against client_max_body_size (1 MB unless
    set): the door sets none, so a long game's Play stream is never cut."""
    async with door_in_front(settings, tmp_path) as opened, StammtischClient(opened.endpoints) as client:
        await client.login("talker")
        table_id = await bot_table(client, "willi", 4, turn_seconds=0)
        async with client.play(table_id) as stream:
            for _ in range(40):  # 40 refused actions of 40 kB each: 1.6 MB on one stream
                with pytest.raises(RefusedAction):
                    await asyncio.wait_for(stream.act({"type": "x" * 40_000}), 10)
            assert (await client.view(table_id)).seq >= 1


async def test_a_play_stream_with_a_bad_token_is_unauthenticated(settings: Settings, tmp_path: Path) -> None:
    """Through the door the SDK sends a Play stream's first message before the headers come back;
    a refusal still arrives as its own code, never INTERNAL."""
    async with door_in_front(settings, tmp_path) as opened, StammtischClient(opened.endpoints) as client:
        await client.login("anna")
        table_id = await bot_table(client, "willi", 4, turn_seconds=0)
        client.token = "not-a-token"
        async with client.play(table_id) as stream:
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await asyncio.wait_for(stream.next_update(), 10)
        assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED

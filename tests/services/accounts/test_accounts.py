"""Device accounts: the same player on every login, refresh tokens that rotate and can be
revoked, display names, and a player's data exported and deleted (real Redis, NATS, gRPC)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time

import grpc
import pytest

from services.accounts.devices import Accounts
from services.accounts.secrets_hash import hash_secret
from shared.api.stammtisch.v1 import accounts_pb2
from shared.config import Settings
from shared.infra.runtime import Runtime
from shared.sdk.client import StammtischClient
from tests.support.stack import bot_table, eventually, finish_game, quick_stack

pytestmark = pytest.mark.integration

DEVICE, SECRET = "phone-0001", "s3cret-of-the-phone-0001"


async def _code(call) -> grpc.StatusCode:  # type: ignore[no-untyped-def]
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await call
    return refused.value.code()


async def test_a_device_is_always_the_same_player_and_a_wrong_secret_is_refused(
        settings: Settings, runtime: Runtime) -> None:
    async with quick_stack(settings) as ends, StammtischClient(ends) as phone:
        first = await phone.login_device(DEVICE, SECRET, "Anna")
        assert first.created and first.display_name == "Anna"
        assert first.expires_at.seconds - time.time() <= settings.token_ttl_seconds + 5
        again = await phone.login_device(DEVICE, SECRET, "Ignored")
        assert (again.player_id, again.created, again.display_name) == (first.player_id, False, "Anna")
        assert await _code(phone.login_device(DEVICE, SECRET + "x")) == grpc.StatusCode.UNAUTHENTICATED
        for device_id, secret, name in (("short", SECRET, ""), (DEVICE, "too short", ""),
                                        (DEVICE + " space", SECRET, ""), (DEVICE, SECRET, "x" * 25)):
            refused = await _code(phone.login_device(device_id, secret, name))
            assert refused == grpc.StatusCode.INVALID_ARGUMENT

        # Two first logins of one new device at once make one player.
        racers = [StammtischClient(ends) for _ in range(4)]
        replies = await asyncio.gather(*(r.login_device("tablet-0002", SECRET) for r in racers))
        assert len({reply.player_id for reply in replies}) == 1
        assert sum(reply.created for reply in replies) == 1
        for racer in racers:
            await racer.close()

        # Stored for good, and the secret only as a hash.
        prefix = settings.key_prefix
        keys = [key async for key in runtime.redis.scan_iter(f"{prefix}:device:*")]
        assert len(keys) == 2
        for key in [*keys, f"{prefix}:player:{first.player_id}".encode()]:
            assert await runtime.redis.ttl(key) == -1
        stored = b"".join([b"".join(pair) for key in keys
                           for pair in (await runtime.redis.hgetall(key)).items()])
        assert SECRET.encode() not in stored

        # The name is a label: changeable, not unique, carried by the new token to the tables.
        renamed = await phone.accounts.SetDisplayName(
            accounts_pb2.SetDisplayNameRequest(display_name="Anna B."), metadata=phone.auth)
        phone.token = renamed.token
        table = await phone.create_table("willi", 3, join=True)
        assert table.seats[0].name == "Anna B."
        assert await _code(phone.accounts.SetDisplayName(
            accounts_pb2.SetDisplayNameRequest(display_name=""), metadata=phone.auth)) == \
            grpc.StatusCode.INVALID_ARGUMENT


async def test_a_device_whose_creator_died_before_writing_its_player_is_completed_on_login(
        runtime: Runtime) -> None:
    """The device and its player are written one after the other (different cluster slots): a
    login that finds the device without its player writes the player, name and device set."""
    accounts = Accounts(runtime)
    salt, digest = await hash_secret(SECRET)
    await accounts._create(keys=[accounts.device_key(DEVICE)],  # the creator dies right after this
                           args=["p" * 32, DEVICE, salt, digest, f"{time.time():.3f}"])
    login = await accounts.login(DEVICE, SECRET, "Anna")
    assert (login.player_id, login.name, login.created) == ("p" * 32, "Anna", False)
    assert await accounts.is_device(login.player_id) and await accounts.name(login.player_id) == "Anna"
    assert [device["device_id"] for device in await accounts.devices(login.player_id)] == [DEVICE]


async def test_refresh_tokens_rotate_and_a_reused_one_revokes_its_login(settings: Settings) -> None:
    async with quick_stack(settings) as ends, StammtischClient(ends) as phone:
        login = await phone.login_device(DEVICE, SECRET)
        first = phone.refresh_token
        renewed = await phone.refresh()
        assert renewed.player_id == login.player_id and renewed.refresh_token != first
        assert (await phone.my_games()).games == []  # the new access token works
        second = phone.refresh_token

        # The used token shows up again: someone has a copy; the whole login is revoked.
        phone.refresh_token = first
        assert await _code(phone.refresh()) == grpc.StatusCode.UNAUTHENTICATED
        phone.refresh_token = second
        assert await _code(phone.refresh()) == grpc.StatusCode.UNAUTHENTICATED

        # Logout revokes one login; "everywhere" every login of the player.
        await phone.login_device(DEVICE, SECRET)
        one = phone.refresh_token
        await phone.accounts.Logout(accounts_pb2.LogoutRequest(refresh_token=one))
        assert await _code(phone.refresh()) == grpc.StatusCode.UNAUTHENTICATED
        await phone.login_device(DEVICE, SECRET)
        laptop = phone.refresh_token
        await phone.login_device(DEVICE, SECRET)
        await phone.accounts.Logout(accounts_pb2.LogoutRequest(refresh_token=phone.refresh_token,
                                                               everywhere=True))
        phone.refresh_token = laptop
        assert await _code(phone.refresh()) == grpc.StatusCode.UNAUTHENTICATED
        for bad in ("", "x" * 80, "0" * 32 + "." + "A" * 43):
            phone.refresh_token = bad
            assert await _code(phone.refresh()) == grpc.StatusCode.UNAUTHENTICATED


async def test_my_data_is_exported_and_deleted_and_my_archived_seats_pseudonymised(
        settings: Settings) -> None:
    async with quick_stack(settings) as ends, StammtischClient(ends) as phone:
        login = await phone.login_device(DEVICE, SECRET, "Anna")
        table_id = await bot_table(phone, "willi", 3, turn_seconds=0)
        await finish_game([phone], table_id, "willi")

        async def exported():  # type: ignore[no-untyped-def]
            reply = await phone.accounts.ExportMyData(accounts_pb2.ExportMyDataRequest(), metadata=phone.auth)
            data = json.loads(reply.data_json)
            return data if data["games"] and data["ratings"] else None
        data = await eventually(exported, 20.0, "the game in the archive and in scoring")
        assert data["account"]["name"] == "Anna" and data["player_id"] == login.player_id
        assert [device["device_id"] for device in data["devices"]] == [DEVICE]
        assert SECRET not in json.dumps(data) and "hash" not in data["devices"][0]
        assert data["games"][0]["table_id"] == table_id
        assert data["ratings"][0]["game"] == "willi"

        assert await _code(phone.accounts.DeleteMyAccount(
            accounts_pb2.DeleteMyAccountRequest(), metadata=phone.auth)) == grpc.StatusCode.INVALID_ARGUMENT
        old_refresh = phone.refresh_token
        deleted = await phone.accounts.DeleteMyAccount(accounts_pb2.DeleteMyAccountRequest(confirm=True),
                                                       metadata=phone.auth)
        assert deleted.games_pseudonymised == 1
        replay = await phone.replay(table_id, 1)
        seat = replay.summary.seats[0]
        assert seat.name == "Deleted player" and seat.player_id not in ("", login.player_id)
        assert login.player_id not in str(replay.summary)
        phone.refresh_token = old_refresh
        assert await _code(phone.refresh()) == grpc.StatusCode.UNAUTHENTICATED
        fresh = await phone.login_device(DEVICE, SECRET)
        assert fresh.created and fresh.player_id != login.player_id
        assert (await phone.my_games()).games == []


async def test_the_sdk_renews_a_device_login_before_its_access_token_expires(settings: Settings) -> None:
    short = dataclasses.replace(settings, token_ttl_seconds=2)
    async with quick_stack(short) as ends, StammtischClient(ends) as phone:
        await phone.login_device(DEVICE, SECRET)
        first_token, first_refresh = phone.token, phone.refresh_token

        async def renewed():  # type: ignore[no-untyped-def]
            return phone.token != first_token and phone.refresh_token != first_refresh
        await eventually(renewed, 10.0, "the SDK to refresh the access token")
        assert (await phone.my_games()).games == []

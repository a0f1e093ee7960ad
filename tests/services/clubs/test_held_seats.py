"""A seat held for an invited player keeps a waiting private table open until the hold ends,
past the usual waiting close."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Mapping

import grpc
import pytest

from shared.config import Settings
from shared.sdk.client import Endpoints, StammtischClient
from shared.sdk.clubs import befriend, create_private_table
from tests.support.clubs import rpc

pytestmark = pytest.mark.integration
WAITING = 1.0


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return dataclasses.replace(settings, waiting_close_seconds=WAITING)


async def gone(client: StammtischClient, table_id: str) -> bool:
    try:
        await client.get_table(table_id)
    except grpc.aio.AioRpcError as err:
        return err.code() == grpc.StatusCode.NOT_FOUND
    return False


async def test_a_held_seat_keeps_the_table_until_the_hold_ends(stack: Mapping[str, str]) -> None:
    anna, bruno = StammtischClient(Endpoints.of(stack)), StammtischClient(Endpoints.of(stack))
    try:
        await anna.login("Anna")
        await bruno.login("Bruno")
        await befriend(anna, bruno)
        held, _ = await create_private_table(anna, "willi", 3, turn_seconds=86_400)
        plain, _ = await create_private_table(anna, "willi", 3, turn_seconds=86_400)
        await rpc(anna, "InviteToTable", table_id=held.table_id, player_id=bruno.player_id, hold_seat=True,
                  hold_seconds=60)
        await asyncio.sleep(WAITING * 4)
        assert await gone(anna, plain.table_id)
        assert not await gone(anna, held.table_id)
        assert (await rpc(bruno, "AnswerTableInvitation", table_id=held.table_id, accept=True)).seat == 1
    finally:
        await anna.close()
        await bruno.close()

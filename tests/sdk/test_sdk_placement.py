"""The SDK plays a table where the lobby says (Table.play_port), and through the game's service
when that process does not answer: a worker may be restarting, and every process serves every
table (shared/tables/placement.py)."""

from __future__ import annotations

import asyncio

import pytest

from shared.api.stammtisch.v1 import lobby_pb2
from shared.infra.local import free_port
from shared.sdk.client import Endpoints
from tests.support.stack import close_all, seated_players

pytestmark = pytest.mark.integration


async def test_a_table_whose_process_does_not_answer_is_played_through_its_service(
        stack: dict[str, str]) -> None:
    clients, table_id = await seated_players(Endpoints.of(stack), "willi", 4, turn_seconds=0)
    client = clients[0]
    try:
        table = await client.get_table(table_id)
        assert table.play_port == 0  # one process: nothing to place
        nobody = lobby_pb2.Table()
        nobody.CopyFrom(table)
        nobody.play_port = free_port()
        client.remember_table(nobody)
        assert client.table_stub(table_id, "engine") is not client.engine
        assert (await client.view(table_id)).seq >= 1
        assert client.table_stub(table_id, "engine") is client.engine

        client.remember_table(nobody)
        async with client.play(table_id) as stream:
            assert (await asyncio.wait_for(stream.next_update(), 10)).seq >= 1
        assert client.table_stub(table_id, "engine") is client.engine
    finally:
        await close_all(clients)

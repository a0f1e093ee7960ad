"""`stammtisch bots` over the real stack: bot clients go to open seats, never to a bot's seat."""

from __future__ import annotations

import asyncio

import pytest

from shared.api.stammtisch.v1 import lobby_pb2
from shared.sdk.client import Endpoints, StammtischClient
from shared.sdk.filler import SeatFiller
from tests.support.stack import eventually, logged_in

pytestmark = pytest.mark.integration


async def test_bot_clients_start_for_open_seats_only(stack: dict[str, str]) -> None:
    endpoints = Endpoints.of(stack)
    async with logged_in(endpoints, "Anna") as (anna,):
        table = await anna.create_table("willi", 4)
        await anna.add_bot(table.table_id)
        await anna.add_bot(table.table_id)  # seats 1 and 2: server bots; seat 3 is open
        filler = SeatFiller(endpoints, "random", think_seconds=0.0)
        started = filler.fill(await anna.list_tables("willi"))
        try:
            assert len(started) == 1, "one bot client for the one open seat"
            seated = await eventually(lambda: _seat_taken(anna, table.table_id, 3),
                                      what="the bot client to take seat 3")
            assert seated.name.startswith("bot-") and not seated.bot
            assert filler.fill(await anna.list_tables("willi", open_only=False)) == []
        finally:
            for task in started:
                task.cancel()
            await asyncio.gather(*started, return_exceptions=True)


async def _seat_taken(client: StammtischClient, table_id: str, seat: int) -> lobby_pb2.Seat | None:
    found = (await client.get_table(table_id)).seats[seat]
    return found if found.player_id else None

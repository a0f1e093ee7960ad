"""Watching a tournament: a seating is announced once its tables can be played, and every
history entry describes the tournament as it was then, however late the watcher replays it."""

from __future__ import annotations

import asyncio
import dataclasses

import grpc
import pytest

from shared.config import Settings
from shared.sdk import tournament as sdk
from shared.sdk.client import StammtischClient
from tests.services.tournament.test_tournament import logged_in

pytestmark = pytest.mark.integration


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return dataclasses.replace(settings, bot_delay_seconds=0.01)


async def test_a_seated_player_finds_its_table_at_once(stack: dict[str, str]) -> None:
    """The moment the `seated` entry arrives, GetView and Subscribe of the table answer (never
    NOT_FOUND, the code of a wrong id)."""
    clients = await logged_in(stack, 6)
    organizer = clients[0]
    created = await sdk.create_tournament(organizer, "Sofort", "willi-stich", "series", capacity=6, rounds=2,
                                          table_size=3, options={"start_round": 19})
    tid = created.tournament_id
    for client in clients:
        await sdk.register(client, tid)
    missing: list[tuple[str, grpc.StatusCode]] = []

    async def look_first(client: StammtischClient, table_id: str) -> None:
        try:
            await client.view(table_id)
            await anext(client.updates(table_id, reconnect=False))
        except grpc.aio.AioRpcError as err:
            missing.append((table_id, err.code()))
        await sdk.bot_player("willi-stich", len(missing))(client, table_id)

    players = [asyncio.create_task(sdk.play_tournament(client, tid, look_first)) for client in clients]
    await sdk.start(organizer, tid)
    await asyncio.wait_for(asyncio.gather(*players), timeout=240)
    assert missing == []
    for client in clients:
        await client.close()


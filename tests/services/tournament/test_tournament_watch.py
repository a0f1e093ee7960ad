"""Watching a tournament: a seating is announced once its tables can be played, and every
history entry describes the tournament as it was then, however late the watcher replays it."""

from __future__ import annotations

import asyncio
import dataclasses

import grpc
import pytest

from shared.api.stammtisch.v1 import tournament_pb2
from shared.config import Settings
from shared.sdk import tournament as sdk
from shared.sdk.client import StammtischClient
from tests.services.tournament.test_tournament import logged_in, run_tournament

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


async def test_a_late_watcher_sees_each_entry_as_it_was(stack: dict[str, str]) -> None:
    """Replayed from seq 0 after the end, the entries say the status of their time, which round
    a round's end is about, and a seating's round as it was seated (unfinished, no games)."""
    clients = await logged_in(stack, 3)
    organizer = clients[0]
    created = await sdk.create_tournament(organizer, "Spaet", "willi-stich", "series", capacity=3, rounds=2,
                                          table_size=3, options={"start_round": 19})
    await run_tournament(clients, organizer, created.tournament_id)
    late = [news async for news in sdk.watch(organizer, created.tournament_id)]
    statuses = {news.change: news.status for news in late}
    assert statuses["created"] == statuses["registered"] == tournament_pb2.TOURNAMENT_STATUS_REGISTRATION
    assert statuses["started"] == statuses["seated"] == statuses["game_finished"] == \
        statuses["round_finished"] == tournament_pb2.TOURNAMENT_STATUS_RUNNING
    assert late[-1].change == "finished" and late[-1].status == tournament_pb2.TOURNAMENT_STATUS_FINISHED
    assert [news.round_number for news in late if news.change == "round_finished"] == [1, 2]
    assert [news.round_number for news in late if news.change == "seated"] == [1, 2]
    for news in late:
        if news.change == "seated":
            assert not news.round.finished and all(t.games_finished == 0 for t in news.round.tables)
    for client in clients:
        await client.close()

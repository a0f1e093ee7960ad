"""Watching a tournament: a seating is announced once its tables can be played, and every
history entry describes the tournament as it was then, however late the watcher replays it."""

from __future__ import annotations

import asyncio
import dataclasses

import grpc
import pytest

from services.tournament.audit import standings_from_logs
from services.tournament.consumer import TournamentResults
from services.tournament.core.rounds import Kind
from services.tournament.core.seating import SeatedTable
from services.tournament.model import Settings as ModelSettings
from services.tournament.model import Tournament
from services.tournament.store import TournamentStore
from shared.api.stammtisch.v1 import tournament_pb2
from shared.config import Settings
from shared.infra.runtime import Runtime
from shared.sdk import tournament as sdk
from shared.sdk.client import StammtischClient
from shared.tables.log import TableLog
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


async def test_a_three_player_willi_result_counts_the_seats_only(stack: dict[str, str],
                                                                 runtime: Runtime) -> None:
    """The game over lists the card monster's total too (4); the tournament's result has the 3
    seats', and the standings agree with the ones recomputed from the table's log."""
    clients = await logged_in(stack, 3)
    created = await sdk.create_tournament(clients[0], "Monster", "willi", "series", capacity=3, rounds=1,
                                          table_size=3)
    news = await run_tournament(clients, clients[0], created.tournament_id)
    tournament = await TournamentStore(runtime).get(created.tournament_id)
    log = await TableLog(runtime).log_after(tournament.table_id(1, 0), 0, limit=100_000)
    over = [event for record in log for event in record.events if event["type"] == "game_over"]
    assert len(over) == 1 and len(over[0]["scores"]) == 4
    result = next(item.result for item in news[0] if item.change == "game_finished")
    assert list(result.scores) == over[0]["scores"][:3] and len(result.points) == 3
    reported = await sdk.standings(clients[0], created.tournament_id)
    assert [(line.player_id, line.points_exact) for line in reported.standings] == \
        await standings_from_logs(runtime, tournament)
    for client in clients:
        await client.close()


async def test_a_game_over_with_fewer_totals_than_seats_is_not_recorded(runtime: Runtime) -> None:
    """Such a result cannot be placed: it is dropped (and logged), not stored short, where it
    would break every later standings."""
    store = TournamentStore(runtime)
    t = Tournament("cd" * 16, "org", ModelSettings("m", "willi", Kind.SERIES, {}, 0.0, 3, 1, 1, 3, 3, 4), 0.0)
    for player in ("a", "b", "c"):
        t.register(player, player, 1500.0)
    t.start(0.0)
    t.seat(1, [SeatedTable(0, ("a", "b", "c"))], 0.0)
    await store.add(t)
    results = TournamentResults(runtime, store)
    assert not await results.record((t.tournament_id, 1, 0), 1, [5, 3], "short")
    assert await store.results(t.tournament_id) == []
    assert await results.record((t.tournament_id, 1, 0), 1, [5, 3, 1, 9], "full")
    assert [r.scores for r, _extra in await store.results(t.tournament_id)] == [(5, 3, 1)]

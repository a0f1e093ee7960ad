"""What lets a tournament of thousands be watched: lean watching (no O(players) parts per game for
a player) and a dropped watch that resumes where it was, without a gap or a duplicate."""

from __future__ import annotations

import asyncio
import dataclasses

import grpc
import pytest

from shared.api.stammtisch.v1 import tournament_pb2
from shared.config import Settings
from shared.sdk import tournament as sdk
from shared.sdk.client import StammtischClient
from tests.services.tournament.test_tournament import endpoints, logged_in, run_tournament
from tests.support.proxy import FaultyProxy

pytestmark = pytest.mark.integration


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return dataclasses.replace(settings, bot_delay_seconds=0.01)


async def test_a_lean_watch_has_the_same_entries_without_the_spectators_parts(stack: dict[str, str]) -> None:
    """Lean: the same entries; seated ones carry the watcher's seat but not the round's tables,
    game_finished ones no standings; round_finished still has the standings."""
    clients = await logged_in(stack, 3)
    organizer = clients[0]
    created = await sdk.create_tournament(organizer, "Schlank", "willi-stich", "series", capacity=3, rounds=2,
                                          table_size=3, options={"start_round": 19})
    tid = created.tournament_id
    await run_tournament(clients, organizer, tid)
    full = [news async for news in sdk.watch(clients[1], tid)]
    lean = [news async for news in sdk.watch(clients[1], tid, lean=True)]
    assert [(n.seq, n.change, n.status) for n in lean] == [(n.seq, n.change, n.status) for n in full]
    seated = [n for n in lean if n.change == "seated"]
    assert len(seated) == 2
    assert all(n.your_seat.table_id and n.your_seat.games == 1 and not n.round.tables for n in seated)
    assert all(n.round.tables for n in full if n.change == "seated")
    assert [n.your_seat for n in seated] == [n.your_seat for n in full if n.change == "seated"]
    assert all(not n.standings for n in lean if n.change == "game_finished")
    assert all(n.standings for n in full if n.change == "game_finished")
    assert [list(n.standings) for n in lean if n.change == "round_finished"] == \
        [list(n.standings) for n in full if n.change == "round_finished"]
    for client in clients:
        await client.close()


async def test_a_dropped_watch_resumes_after_the_last_entry_seen(stack: dict[str, str]) -> None:
    """The watcher's connection is cut mid-tournament; its watch reconnects with after_seq and
    yields every entry exactly once, in order, as a watcher that was never cut."""
    organizer, *players = await logged_in(stack, 4)
    created = await sdk.create_tournament(organizer, "Abgerissen", "willi-stich", "series", capacity=4,
                                          rounds=1, table_size=3, options={"start_round": 19})
    tid = created.tournament_id
    host, port = stack["tournament"].rsplit(":", 1)
    async with FaultyProxy(host, int(port)).running() as proxy:
        through_proxy = dataclasses.replace(endpoints(stack), tournament=f"127.0.0.1:{proxy.port}")
        watcher = StammtischClient(through_proxy)
        await watcher.login("watcher")
        seen: list[tournament_pb2.WatchTournamentResponse] = []
        two_registered = asyncio.Event()

        async def watch() -> None:
            async for news in sdk.watch(watcher, tid):
                seen.append(news)
                if sum(n.change == "registered" for n in seen) == 2:
                    two_registered.set()

        watching = asyncio.create_task(watch())
        for player in players[:2]:
            await sdk.register(player, tid)
        await asyncio.wait_for(two_registered.wait(), 30)
        proxy.cut_reply_to = tid.encode()  # the next call naming the tournament loses its reply
        with pytest.raises(grpc.aio.AioRpcError) as cut:  # and with it the connection
            await sdk.get(watcher, tid)
        assert cut.value.code() == grpc.StatusCode.UNAVAILABLE and proxy.cuts == 1
        await sdk.register(players[2], tid)
        await organizer.tournaments.CancelTournament(
            tournament_pb2.CancelTournamentRequest(tournament_id=tid), metadata=organizer.auth)
        await asyncio.wait_for(watching, 30)
        await watcher.close()
    direct = [news async for news in sdk.watch(organizer, tid)]
    assert [n.seq for n in seen] == list(range(1, len(direct) + 1))
    assert [(n.seq, n.change, n.player_id) for n in seen] == [(n.seq, n.change, n.player_id) for n in direct]
    assert seen[-1].change == "cancelled"
    for client in (organizer, *players):
        await client.close()

"""Whole tournaments through the real API: bots register, watch, and play their seats.

The stack runs in this process (all five services); the checks compare the
standings the service reports with standings recomputed here from the stored
game logs of the tournament's tables.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Mapping

import pytest

from services.tournament.audit import standings_from_logs
from services.tournament.core.rounds import Kind, entrants
from services.tournament.core.standings import advancing
from services.tournament.store import TournamentStore
from shared.api.stammtisch.v1 import tournament_pb2
from shared.config import Settings
from shared.infra.runtime import Runtime
from shared.sdk import tournament as sdk
from shared.sdk.client import Endpoints, StammtischClient
from shared.tables.clocks import deadline_policy
from shared.tables.store import TableStore

pytestmark = pytest.mark.integration


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """Bots and clocks fast enough for tests."""
    return dataclasses.replace(settings, bot_delay_seconds=0.01)


def endpoints(stack: Mapping[str, str]) -> Endpoints:
    return Endpoints(stack["lobby"], stack["engine"], stack["arbiter"], stack["scoring"], stack["tournament"])


async def logged_in(stack: Mapping[str, str], count: int) -> list[StammtischClient]:
    clients = [StammtischClient(endpoints(stack)) for _ in range(count)]
    for index, client in enumerate(clients):
        await client.login(f"p{index}")
    return clients


async def run_tournament(clients: list[StammtischClient], organizer: StammtischClient,
                         tournament_id: str) -> list[list[tournament_pb2.WatchTournamentResponse]]:
    """Every client registers and plays with a bot until the end; returns each one's news."""
    for client in clients:
        await sdk.register(client, tournament_id)
    news: list[list[tournament_pb2.WatchTournamentResponse]] = [[] for _ in clients]
    reply = await organizer.tournaments.GetTournament(
        tournament_pb2.GetTournamentRequest(tournament_id=tournament_id), metadata=organizer.auth)
    name = reply.tournament.settings.game
    players = [asyncio.create_task(sdk.play_tournament(client, tournament_id, sdk.bot_player(name, index),
                                                       news[index].append))
               for index, client in enumerate(clients)]
    await sdk.start(organizer, tournament_id)
    await asyncio.wait_for(asyncio.gather(*players), timeout=240)
    return news


def seats_per_round(news: list[tournament_pb2.WatchTournamentResponse]) -> dict[int, str]:
    return {item.your_seat.round: item.your_seat.table_id for item in news
            if item.change == "seated" and item.HasField("your_seat")}


async def test_a_series_with_re_seating_and_duplicate_deals(stack: dict[str, str], runtime: Runtime) -> None:
    clients = await logged_in(stack, 8)
    organizer = clients[0]
    created = await sdk.create_tournament(
        organizer, "Stammtisch-Abend", "willi-stich", "series", capacity=8, rounds=2, games_per_round=1,
        table_size=4, options={"start_round": 18}, duplicate_deals=True)
    news = await run_tournament(clients, organizer, created.tournament_id)

    store = TournamentStore(runtime)
    tournament = await store.get(created.tournament_id)
    assert tournament.status == "finished" and len(tournament.rounds) == 2
    for round_ in tournament.rounds:
        seated = [player for seats in round_.tables for player in seats]
        assert sorted(seated) == sorted(c.player_id for c in clients)
    for mine in news:
        assert set(seats_per_round(mine)) == {1, 2}
        assert mine[-1].change == "finished" and len(mine[-1].standings) == 8
    reported = await sdk.standings(organizer, created.tournament_id)
    assert [(line.player_id, line.points_exact) for line in reported.standings] == \
        await standings_from_logs(runtime, tournament)
    # Duplicate deals: both tables of a round were dealt from the same seed and hold the same cards.
    tables = TableStore(runtime, deadline_policy(0.0, 1.0))
    for round_ in tournament.rounds:
        firsts = [(await tables.log_after(tournament.table_id(round_.number, index), 0, limit=1))[0]
                  for index in range(len(round_.tables))]
        assert len({record.meta.seed for record in firsts}) == 1
        assert all(record.state == firsts[0].state for record in firsts)
    # Round 2 is seated by the standings: no pair of round 1 sits together again where avoidable.
    met = {frozenset(pair) for seats in tournament.rounds[0].tables for pair in _pairs(seats)}
    again = [pair for seats in tournament.rounds[1].tables for pair in _pairs(seats)
             if frozenset(pair) in met]
    assert len(again) == 4  # two tables of 4 from two tables of 4: at least 2 + 2 pairs meet again
    for client in clients:
        await client.close()


def _pairs(seats: list[str]) -> list[tuple[str, str]]:
    return [(a, b) for i, a in enumerate(seats) for b in seats[i + 1:]]


async def test_a_knockout_plays_down_to_one_final_table(stack: dict[str, str], runtime: Runtime) -> None:
    clients = await logged_in(stack, 9)
    organizer = clients[0]
    created = await sdk.create_tournament(
        organizer, "K.o.", "willi-stich", "knockout", capacity=9, games_per_round=1, table_size=3,
        options={"start_round": 19}, keep=1)
    await run_tournament(clients, organizer, created.tournament_id)
    tournament = await TournamentStore(runtime).get(created.tournament_id)
    assert tournament.settings.kind == Kind.KNOCKOUT
    assert [len(r.tables) for r in tournament.rounds] == [3, 1]
    final = set(tournament.rounds[1].tables[0])
    reported = await sdk.standings(organizer, created.tournament_id)
    assert {line.player_id for line in reported.standings[:3]} == final
    # The winner is the final table's winner, whatever points the others carried from round 1.
    seeds = {entrant.player_id: entrant.seed_rank for entrant in entrants(tournament.core_players())}
    results = [result for result, _extra in await TournamentStore(runtime).results(created.tournament_id)]
    winner = advancing(tournament.rounds[1].seated(), results, 2, 1, seeds)[0]
    assert reported.standings[0].player_id == winner
    assert [(line.reached_round, line.reached_place) for line in reported.standings[:3]] == \
        [(2, 1), (2, 2), (2, 3)]
    assert [(line.player_id, line.points_exact) for line in reported.standings] == \
        await standings_from_logs(runtime, tournament)
    for client in clients:
        await client.close()

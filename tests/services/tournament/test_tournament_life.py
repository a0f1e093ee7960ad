"""The life of a tournament: time limits, withdrawals, late entries, check-in, controls, errors."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from fractions import Fraction

import grpc
import pytest

from services.tournament.audit import standings_from_logs
from services.tournament.store import TournamentStore
from shared.api.stammtisch.v1 import tournament_pb2
from shared.config import Settings
from shared.infra.runtime import Runtime
from shared.sdk import tournament as sdk
from shared.sdk.client import StammtischClient
from shared.tables.clocks import deadline_policy
from shared.tables.store import TableStore
from tests.services.tournament.test_tournament import logged_in

pytestmark = pytest.mark.integration


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return dataclasses.replace(settings, bot_delay_seconds=0.01)


async def until(what: str, probe: Callable[[], bool], timeout: float = 60.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not probe():
        assert asyncio.get_running_loop().time() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.05)


def history_changes(news: list[tournament_pb2.WatchTournamentResponse]) -> list[str]:
    return [item.change for item in news]


async def test_time_limit_withdrawal_and_late_entry(stack: dict[str, str], runtime: Runtime) -> None:
    clients = await logged_in(stack, 8)
    organizer, quitter, idler, late = clients[0], clients[1], clients[2], clients[7]
    created = await sdk.create_tournament(
        organizer, "Abend", "willi-stich", "series", capacity=8, rounds=2, games_per_round=1,
        table_size=3, options={"start_round": 17}, turn_seconds=0, round_seconds=3,
        late_entry_until_round=2)
    tid = created.tournament_id
    players = [c for c in clients if c is not late]
    for client in players:
        await sdk.register(client, tid)
    news: list[tournament_pb2.WatchTournamentResponse] = []
    watcher = asyncio.create_task(sdk.play_tournament(organizer, tid, sdk.bot_player("willi-stich", 0),
                                                      news.append))
    bots = [asyncio.create_task(sdk.play_tournament(c, tid, sdk.bot_player("willi-stich", i)))
            for i, c in enumerate(players[3:], 3)]
    await sdk.start(organizer, tid)
    await until("round 1 seated", lambda: "seated" in history_changes(news))
    # Mid-round: one player withdraws (a bot plays the seat out), one enters late.
    await quitter.tournaments.Withdraw(tournament_pb2.WithdrawRequest(tournament_id=tid),
                                       metadata=quitter.auth)
    await sdk.register(late, tid)
    bots.append(asyncio.create_task(sdk.play_tournament(late, tid, sdk.bot_player("willi-stich", 7))))
    await asyncio.wait_for(asyncio.gather(watcher, *bots), timeout=120)

    tournament = await TournamentStore(runtime).get(tid)
    round1, round2 = (set(p for seats in r.tables for p in seats) for r in tournament.rounds)
    assert quitter.player_id in round1 and quitter.player_id not in round2
    assert late.player_id not in round1 and late.player_id in round2
    assert history_changes(news).count("time_up") == 2  # the idle player stalls a table each round
    assert history_changes(news).count("game_finished") == len(tournament.rounds[0].tables) + len(
        tournament.rounds[1].tables)  # stalled games were finished by bots, none lost
    reported = await sdk.standings(organizer, tid)
    lines = {line.player_id: line for line in reported.standings}
    assert lines[quitter.player_id].withdrawn and lines[quitter.player_id].games == 1
    late_game = [r for r in news if r.change == "game_finished" and late.player_id in r.result.player_ids]
    earned = Fraction(late_game[0].result.points[list(late_game[0].result.player_ids).index(late.player_id)])
    assert Fraction(lines[late.player_id].points_exact) == Fraction(1, 2) + earned
    assert [(line.player_id, line.points_exact) for line in reported.standings] == \
        await standings_from_logs(runtime, tournament)
    assert idler.player_id in round2
    for client in clients:
        await client.close()


async def test_check_in_replaces_no_shows_by_bots(stack: dict[str, str], runtime: Runtime) -> None:
    clients = await logged_in(stack, 4)
    created = await sdk.create_tournament(
        clients[0], "Check-in", "willi-stich", "series", capacity=4, rounds=1, table_size=4,
        options={"start_round": 19}, check_in_seconds=1, no_show=tournament_pb2.NO_SHOW_BOT)
    tid = created.tournament_id
    for client in clients:
        await sdk.register(client, tid)
    await sdk.start(clients[0], tid)
    players = []
    for index, client in enumerate(clients[:3]):
        await client.tournaments.CheckIn(tournament_pb2.CheckInRequest(tournament_id=tid),
                                         metadata=client.auth)
        players.append(asyncio.create_task(
            sdk.play_tournament(client, tid, sdk.bot_player("willi-stich", index))))
    await asyncio.wait_for(asyncio.gather(*players), timeout=120)
    tournament = await TournamentStore(runtime).get(tid)
    assert tournament.rounds[0].tables[0].count("") == 1  # the no-show's seat: a bot
    reported = await sdk.standings(clients[0], tid)
    assert {line.player_id for line in reported.standings} == {c.player_id for c in clients[:3]}
    for client in clients:
        await client.close()


async def code_of(call: object) -> grpc.StatusCode:
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await call  # type: ignore[misc]
    return raised.value.code()


async def test_controls_and_bad_input(stack: dict[str, str]) -> None:
    organizer, other = await logged_in(stack, 2)
    created = await sdk.create_tournament(organizer, "Ctl", "willi", "series", capacity=4, rounds=1,
                                          table_size=3)
    tid = created.tournament_id
    start = tournament_pb2.StartTournamentRequest(tournament_id=tid)
    assert await code_of(other.tournaments.StartTournament(start, metadata=other.auth)) == \
        grpc.StatusCode.PERMISSION_DENIED
    assert await code_of(other.tournaments.GetTournament(
        tournament_pb2.GetTournamentRequest(tournament_id="../x"), metadata=other.auth)) == \
        grpc.StatusCode.INVALID_ARGUMENT
    assert await code_of(other.tournaments.GetTournament(
        tournament_pb2.GetTournamentRequest(tournament_id="0" * 32), metadata=other.auth)) == \
        grpc.StatusCode.NOT_FOUND
    assert await code_of(sdk.create_tournament(organizer, "x", "willi-stich", "series", capacity=4,
                                               table_size=7)) == grpc.StatusCode.INVALID_ARGUMENT
    assert await code_of(sdk.create_tournament(organizer, "x", "wie-waldi", "series", capacity=4,
                                               table_size=3, duplicate_deals=True)) == \
        grpc.StatusCode.INVALID_ARGUMENT
    assert await code_of(sdk.create_tournament(organizer, "x", "willi", "knockout", capacity=4,
                                               table_size=3, keep=3)) == grpc.StatusCode.INVALID_ARGUMENT
    await sdk.register(other, tid)
    assert await code_of(sdk.register(other, tid)) == grpc.StatusCode.FAILED_PRECONDITION
    assert await code_of(organizer.tournaments.PauseTournament(
        tournament_pb2.PauseTournamentRequest(tournament_id=tid), metadata=organizer.auth)) == \
        grpc.StatusCode.FAILED_PRECONDITION
    cancelled = await organizer.tournaments.CancelTournament(
        tournament_pb2.CancelTournamentRequest(tournament_id=tid), metadata=organizer.auth)
    assert cancelled.tournament.status == tournament_pb2.TOURNAMENT_STATUS_CANCELLED
    for client in (organizer, other):
        await client.close()


async def test_pause_holds_the_next_round_until_resumed(stack: dict[str, str]) -> None:
    clients = await logged_in(stack, 3)
    organizer = clients[0]
    created = await sdk.create_tournament(organizer, "Pause", "willi-stich", "series", capacity=3,
                                          rounds=2, table_size=3, options={"start_round": 19})
    tid = created.tournament_id
    for client in clients:
        await sdk.register(client, tid)
    news: list[tournament_pb2.WatchTournamentResponse] = []
    players = [asyncio.create_task(sdk.play_tournament(c, tid, sdk.bot_player("willi-stich", i),
                                                       news.append if i == 0 else None))
               for i, c in enumerate(clients)]
    await sdk.start(organizer, tid)
    await until("round 1 seated", lambda: "seated" in history_changes(news))
    await organizer.tournaments.PauseTournament(tournament_pb2.PauseTournamentRequest(tournament_id=tid),
                                                metadata=organizer.auth)
    await until("round 1 finished", lambda: "round_finished" in history_changes(news))
    await asyncio.sleep(1.0)  # several director steps
    assert history_changes(news).count("seated") == 1
    await organizer.tournaments.ResumeTournament(tournament_pb2.ResumeTournamentRequest(tournament_id=tid),
                                                 metadata=organizer.auth)
    await asyncio.wait_for(asyncio.gather(*players), timeout=120)
    assert history_changes(news).count("seated") == 2 and history_changes(news)[-1] == "finished"
    for client in clients:
        await client.close()


async def test_nobody_gets_ready_at_a_tournament_table(stack: dict[str, str], runtime: Runtime) -> None:
    """Between a tournament table's games SetReady would start the next game with a random deal
    ahead of the director: it is refused, and every game is dealt the tournament's seed."""
    clients = await logged_in(stack, 3)
    created = await sdk.create_tournament(clients[0], "Ready", "willi-stich", "series", capacity=3,
                                          rounds=1, games_per_round=3, table_size=3,
                                          options={"start_round": 19})
    tid = created.tournament_id
    for client in clients:
        await sdk.register(client, tid)
    refusals: list[tuple[grpc.StatusCode, str]] = []
    bot = sdk.bot_player("willi-stich", 0)

    async def impatient(client: StammtischClient, table_id: str) -> None:
        await bot(client, table_id)  # the game is over: at once ready for the next one
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await client.ready(table_id)
        refusals.append((refused.value.code(), refused.value.details() or ""))

    players = [asyncio.create_task(sdk.play_tournament(client, tid, impatient if index == 0 else
                                                       sdk.bot_player("willi-stich", index)))
               for index, client in enumerate(clients)]
    await sdk.start(clients[0], tid)
    await asyncio.wait_for(asyncio.gather(*players), timeout=120)
    assert len(refusals) == 3
    assert all(code == grpc.StatusCode.FAILED_PRECONDITION and "its director starts every game" in details
               for code, details in refusals), refusals
    tournament = await TournamentStore(runtime).get(tid)
    log = await TableStore(runtime, deadline_policy(0.0, 1.0)).log_after(tournament.table_id(1, 0), 0,
                                                                         limit=10_000)
    seeds = {record.meta.game_no: record.meta.seed for record in log}
    assert seeds == {game: tournament.game_seed(1, 0, game) for game in (1, 2, 3)}
    for client in clients:
        await client.close()

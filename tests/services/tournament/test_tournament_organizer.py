"""What organizers ask for, through the real API: rounds started by hand, forbidden pairs,
the tie-break order and the results export."""

from __future__ import annotations

import asyncio
import csv
import io
import json

import grpc
import pytest

from services.tournament.store import TournamentStore
from shared.api.stammtisch.v1 import tournament_pb2
from shared.infra.runtime import Runtime
from shared.sdk import tournament as sdk
from tests.services.tournament.test_tournament import logged_in
from tests.services.tournament.test_tournament_life import settings  # noqa: F401  (fast bots)

pytestmark = pytest.mark.integration


async def refused(call: object, code: grpc.StatusCode) -> str:
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await call  # type: ignore[misc]
    assert err.value.code() == code, err.value.details()
    return str(err.value.details())


async def test_manual_rounds_forbidden_pairs_tie_breaks_and_export(stack: dict[str, str],
                                                                   runtime: Runtime) -> None:
    clients = await logged_in(stack, 6)
    organizer, stranger = clients[0], clients[5]
    await refused(sdk.create_tournament(organizer, "x", "willi-stich", "series", capacity=6, table_size=3,
                                        tie_breaks=["luck"]), grpc.StatusCode.INVALID_ARGUMENT)
    created = await sdk.create_tournament(
        organizer, "Drei Abende", "willi-stich", "series", capacity=6, rounds=2, games_per_round=1,
        table_size=3, options={"start_round": 19}, manual_rounds=True, tie_breaks=["wins", "best_game"])
    tid = created.tournament_id
    assert created.settings.manual_rounds and list(created.settings.tie_breaks) == ["wins", "best_game"]
    for client in clients:
        await sdk.register(client, tid)
    ids = [c.player_id for c in clients]
    banned = [(ids[1], ids[2]), (ids[3], ids[4])]
    await refused(sdk.set_forbidden_pairs(stranger, tid, banned), grpc.StatusCode.PERMISSION_DENIED)
    await refused(sdk.set_forbidden_pairs(organizer, tid, [(ids[1], ids[1])]),
                  grpc.StatusCode.INVALID_ARGUMENT)
    await refused(sdk.set_forbidden_pairs(organizer, tid, [(ids[1], "f" * 32)]),
                  grpc.StatusCode.FAILED_PRECONDITION)
    reply = await sdk.set_forbidden_pairs(organizer, tid, banned)
    assert {(p.player_a, p.player_b) for p in reply.forbidden_pairs} == {tuple(sorted(p)) for p in banned}
    await refused(sdk.start_next_round(organizer, tid), grpc.StatusCode.FAILED_PRECONDITION)  # not running

    players = [asyncio.create_task(sdk.play_tournament(c, tid, sdk.bot_player("willi-stich", i)))
               for i, c in enumerate(clients)]
    await sdk.start(organizer, tid)
    waiting: list[tournament_pb2.Tournament] = []

    async def probe() -> None:
        while not waiting:
            now = await sdk.get(organizer, tid)
            if now.awaiting_next_round:
                waiting.append(now)
            await asyncio.sleep(0.1)

    await asyncio.wait_for(probe(), timeout=120)
    assert waiting[0].current_round == 1 and waiting[0].rounds[0].finished
    await asyncio.sleep(1.0)  # the director would have seated round 2 by now; it waits
    still = await sdk.get(organizer, tid)
    assert still.current_round == 1 and still.awaiting_next_round
    await refused(sdk.start_next_round(stranger, tid), grpc.StatusCode.PERMISSION_DENIED)
    started = await sdk.start_next_round(organizer, tid)
    assert not started.awaiting_next_round
    await refused(sdk.start_next_round(organizer, tid), grpc.StatusCode.FAILED_PRECONDITION)
    await asyncio.wait_for(asyncio.gather(*players), timeout=120)

    tournament = await TournamentStore(runtime).get(tid)
    assert tournament.status == "finished" and len(tournament.rounds) == 2
    for round_ in tournament.rounds:  # six players, two tables of three: both pairs can sit apart
        assert not round_.forced
        for seats in round_.tables:
            assert not any(a in seats and b in seats for a, b in banned)

    standings = (await sdk.standings(organizer, tid)).standings
    assert [tb.name for tb in standings[0].tie_breaks] == ["wins", "best_game"]
    assert all(line.tie_breaks[0].value == line.wins for line in standings)
    exported = await sdk.export_results(stranger, tid, tournament_pb2.EXPORT_FORMAT_JSON)
    assert exported.content_type == "application/json" and exported.filename == f"{tid}-results.json"
    document = json.loads(exported.content)
    assert [(row["player_id"], row["points_exact"]) for row in document["standings"]] == \
        [(line.player_id, line.points_exact) for line in standings]
    assert [row["tie_breaks"] for row in document["standings"]] == \
        [{tb.name: tb.exact for tb in line.tie_breaks} for line in standings]
    assert len(document["games"]) == 4 and all(len(game["seats"]) == 3 for game in document["games"])

    standings_csv = await sdk.export_results(organizer, tid, tournament_pb2.EXPORT_FORMAT_STANDINGS_CSV)
    table = list(csv.reader(io.StringIO(standings_csv.content.decode())))
    assert table[0][-2:] == ["wins", "best_game"]
    assert [row[1] for row in table[1:]] == [line.player_id for line in standings]
    games = list(csv.DictReader(io.StringIO(
        (await sdk.export_results(organizer, tid, tournament_pb2.EXPORT_FORMAT_GAMES_CSV)).content.decode())))
    assert len(games) == 12
    totals = {(g["round"], g["table"], g["game"]): [] for g in games}
    for row in games:
        totals[(row["round"], row["table"], row["game"])].append(int(row["total"]))
    recorded = {(str(r["round"]), str(r["table"]), str(r["game"])): [s["total"] for s in r["seats"]]
                for r in document["games"]}
    assert totals == recorded
    await refused(sdk.export_results(organizer, tid, tournament_pb2.EXPORT_FORMAT_UNSPECIFIED),
                  grpc.StatusCode.INVALID_ARGUMENT)
    for client in clients:
        await client.close()

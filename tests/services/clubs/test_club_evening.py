"""The whole Stammtisch story through the real API: two devices become friends and see each
other online, a club is made and joined by code, a private table by invitation with a one-day
clock pushes one "your turn" to the device that closed its app, and a club evening scheduled a
minute ahead opens a tournament of the checked-in members whose result the club season shows.
"""

from __future__ import annotations

import asyncio
import dataclasses
import secrets
import time
from collections.abc import Iterator, Mapping
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from services.tools.perf.push_gateway import Gateway, push_gateway
from shared.api.stammtisch.v1 import clubs_pb2 as K
from shared.config import Settings
from shared.sdk import tournament as tournament_sdk
from shared.sdk.client import Endpoints, StammtischClient
from shared.sdk.clubs import befriend, create_private_table, watch_inbox
from tests.services.clubs.test_private_tables import act_once, until_turn_of
from tests.support.clubs import rpc, until

pytestmark = [pytest.mark.integration, pytest.mark.slow]
ZONE = "Europe/Berlin"
EVENING_GAME = "mau-mau"


@pytest.fixture
def gateway() -> Iterator[Gateway]:
    with push_gateway() as gw:
        yield gw


@pytest.fixture
def settings(settings: Settings, gateway: Gateway) -> Settings:
    return dataclasses.replace(settings, push_gateway_url=gateway.url, your_turn_delay_seconds=0.5,
                               bot_delay_seconds=0.01)


async def device(stack: Mapping[str, str], name: str) -> StammtischClient:
    client = StammtischClient(Endpoints.of(stack))
    await client.login_device(secrets.token_hex(16), secrets.token_urlsafe(24), name)
    return client


async def test_two_devices_a_club_a_private_table_and_a_club_evening(
        stack: Mapping[str, str], gateway: Gateway) -> None:
    anna, bruno = await device(stack, "Anna"), await device(stack, "Bruno")
    try:
        await rpc(bruno, "RegisterPushToken", platform=K.PUSH_PLATFORM_APNS, token="bruno-iphone",
                  app_id="de.example.stammtisch")
        await befriend(anna, bruno)
        annas_app, brunos_app = watch_inbox(anna), watch_inbox(bruno)
        await anext(annas_app)
        await anext(brunos_app)
        friends = {f.player_id: f for f in (await rpc(anna, "ListFriends")).friends}
        assert friends[bruno.player_id].presence == K.PRESENCE_ONLINE

        club = (await rpc(anna, "CreateClub", name="Stammtisch Anker", time_zone=ZONE,
                          join_policy=K.CLUB_JOIN_POLICY_INVITATION)).club
        assert (await rpc(bruno, "JoinClub", code=club.code)).club.member_count == 2

        table, _code = await create_private_table(anna, "willi", 3, turn_seconds=86_400)
        await rpc(anna, "InviteToTable", table_id=table.table_id, player_id=bruno.player_id, hold_seat=True)
        await anna.add_bot(table.table_id)
        await rpc(bruno, "AnswerTableInvitation", table_id=table.table_id, accept=True)
        await anna.ready(table.table_id)
        await bruno.ready(table.table_id)
        await brunos_app.aclose()  # Bruno closes the app

        async def offline() -> bool:
            seen = {f.player_id: f for f in (await rpc(anna, "ListFriends")).friends}
            return seen[bruno.player_id].presence == K.PRESENCE_OFFLINE
        await until(offline)
        await until_turn_of(bruno, [anna], table.table_id)

        async def pushed() -> bool:
            return bool(gateway.of_kind("YOUR_TURN", "bruno-iphone"))
        await until(pushed, 15)
        await asyncio.sleep(2)
        assert len(gateway.of_kind("YOUR_TURN", "bruno-iphone")) == 1
        inbox = (await rpc(bruno, "ListInbox")).notifications
        assert [n.table_id for n in inbox if n.kind == K.NOTIFICATION_KIND_YOUR_TURN] == [table.table_id]
        assert await act_once(bruno, table.table_id)

        # The club evening, a minute ahead in the club's time zone.
        start = datetime.fromtimestamp(time.time() + 60, ZoneInfo(ZONE))
        evening = (await rpc(anna, "SetClubEvening", club_id=club.club_id, evening=K.ClubEvening(
            weekday=start.isoweekday(), minute=start.hour * 60 + start.minute, game=EVENING_GAME,
            table_size=2, rounds=1, games_per_round=1, turn_seconds=30))).evening
        assert evening.next_at.seconds - time.time() <= 61
        for client in (anna, bruno):
            await rpc(client, "CheckInClubEvening", club_id=club.club_id)
        async def notice() -> K.Notification:  # Anna's app shows the notice (after her own turns)
            while (news := await anext(annas_app)).notification.kind != K.NOTIFICATION_KIND_CLUB_EVENING:
                pass
            return news.notification
        assert (await asyncio.wait_for(notice(), 10)).club_id == club.club_id

        async def opened() -> bool:
            return bool((await rpc(anna, "GetClubSeason", club_id=club.club_id)).tournament_ids)
        await until(opened, 90)
        (tournament_id,) = (await rpc(anna, "GetClubSeason", club_id=club.club_id)).tournament_ids

        async def seated() -> bool:
            notes = (await rpc(bruno, "ListInbox")).notifications
            return any(n.kind == K.NOTIFICATION_KIND_TOURNAMENT_SEATED for n in notes)
        await until(seated, 20)
        await asyncio.wait_for(asyncio.gather(*(
            tournament_sdk.play_tournament(client, tournament_id, tournament_sdk.bot_player(EVENING_GAME, i))
            for i, client in enumerate((anna, bruno)))), 120)

        async def scored() -> bool:
            return len((await rpc(bruno, "GetClubSeason", club_id=club.club_id)).lines) == 2
        await until(scored, 20)
        season = await rpc(bruno, "GetClubSeason", club_id=club.club_id)
        assert [line.points for line in season.lines] == [2.0, 1.0] and season.season == 1
        assert {line.player_id for line in season.lines} == {anna.player_id, bruno.player_id}
        assert season.lines[0].wins == 1
        async def rated() -> bool:  # the evening's game counts for the club's leaderboard
            board = await rpc(anna, "GetClubLeaderboard", club_id=club.club_id, game=EVENING_GAME)
            return sorted(line.games for line in board.lines) == [1, 1]
        await until(rated, 20)
        # The season closes with its table kept; the next starts empty.
        assert (await rpc(anna, "CloseClubSeason", club_id=club.club_id)).season == 2
        assert (await rpc(anna, "GetClubSeason", club_id=club.club_id)).lines == []
        kept = await rpc(anna, "GetClubSeason", club_id=club.club_id, season=1)
        assert kept.closed and list(kept.lines) == list(season.lines)
        await annas_app.aclose()
    finally:
        await anna.close()
        await bruno.close()

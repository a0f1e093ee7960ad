"""Private tables by invitation with a held seat, and play by notification: "your turn" once per
decision to a player who is not watching, "time is almost up" at 80% of the clock; through the
real API of a stack in this process and a real HTTP push gateway."""

from __future__ import annotations

import asyncio
import dataclasses
import random
from collections.abc import AsyncIterator, Iterator, Mapping

import grpc
import pytest

from services.host.runner import running_services
from services.tools.perf.push_gateway import Gateway, push_gateway
from shared.api.stammtisch.v1 import clubs_pb2 as K
from shared.api.stammtisch.v1 import lobby_pb2
from shared.config import SERVICE_NAMES, Settings
from shared.games.registry import bot_levels
from shared.sdk.client import Endpoints, StammtischClient
from shared.sdk.clubs import befriend, create_private_table, join_by_code
from tests.support.clubs import refused, rpc, until

pytestmark = pytest.mark.integration
GAME = "willi"
Code = grpc.StatusCode


@pytest.fixture
def gateway() -> Iterator[Gateway]:
    with push_gateway() as gw:
        yield gw


@pytest.fixture
def settings(settings: Settings, gateway: Gateway) -> Settings:
    return dataclasses.replace(settings, push_gateway_url=gateway.url, your_turn_delay_seconds=0.3,
                               notify_turn_seconds=3.0, bot_delay_seconds=0.01)


@pytest.fixture
async def players(stack: Mapping[str, str]) -> AsyncIterator[list[StammtischClient]]:
    clients = [StammtischClient(Endpoints.of(stack)) for _ in range(3)]
    for client, name in zip(clients, ("Anna", "Bruno", "Carla"), strict=True):
        await client.login(name)
    yield clients
    for client in clients:
        await client.close()


async def act_once(client: StammtischClient, table_id: str) -> bool:
    """Make one move with a bot's choice if a decision waits on the client; whether it did."""
    update = await client.view(table_id)
    if not update.view.get("legal"):
        return False
    bot = next(iter(bot_levels(GAME).values()))()
    await client.act(table_id, bot.choose(update.view, random.Random(update.seq)),
                     round_no=update.view.get("round"))
    return True


async def until_turn_of(waiting: StammtischClient, others: list[StammtischClient], table_id: str) -> None:
    """The others play with a bot's choices until a decision waits on ``waiting``."""
    for _ in range(400):
        if (await waiting.view(table_id)).view.get("legal"):
            return
        for other in others:
            await act_once(other, table_id)
        await asyncio.sleep(0.02)
    raise AssertionError("the decision never came to the player")


async def test_a_private_table_by_invitation_played_by_notification(
        players: list[StammtischClient], gateway: Gateway) -> None:
    anna, bruno, carla = players
    await befriend(anna, bruno)
    await rpc(bruno, "RegisterPushToken", platform=K.PUSH_PLATFORM_FCM, token="bruno-phone",
              app_id="de.example.stammtisch")
    table, code = await create_private_table(anna, GAME, 3, turn_seconds=86_400)
    table_id = table.table_id
    assert table.private and len(code) == 6 and table.options.turn_seconds == 86_400
    assert table_id not in [t.table_id for t in await carla.list_tables(open_only=False)]
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await carla.join(table_id)
    assert caught.value.code() == Code.FAILED_PRECONDITION
    assert await refused(anna, "InviteToTable", table_id=table_id, player_id=carla.player_id) \
        == Code.PERMISSION_DENIED

    invited = await rpc(anna, "InviteToTable", table_id=table_id, player_id=bruno.player_id, hold_seat=True)
    assert invited.seat == 1
    assert list((await anna.get_table(table_id)).held_seats) == [1]
    table = await anna.add_bot(table_id)
    assert table.seats[2].bot and not table.seats[1].player_id  # the bot left the held seat alone
    invitation = (await rpc(bruno, "ListInbox")).notifications[0]
    assert (invitation.kind, invitation.table_id) == (K.NOTIFICATION_KIND_TABLE_INVITATION, table_id)
    assert (await rpc(bruno, "AnswerTableInvitation", table_id=table_id, accept=True)).seat == 1
    assert await refused(carla, "AnswerTableInvitation", table_id=table_id, accept=True) == Code.NOT_FOUND
    await anna.ready(table_id)
    await bruno.ready(table_id)

    # Bruno's app is closed: the decision that comes to him is pushed once, and waits in his list.
    await until_turn_of(bruno, [anna], table_id)

    async def pushed(count: int) -> bool:
        return len(gateway.of_kind("YOUR_TURN", "bruno-phone")) >= count
    await until(lambda: pushed(1), 15)
    await asyncio.sleep(1.5)
    (push,) = gateway.of_kind("YOUR_TURN", "bruno-phone")
    assert push["collapse_key"] == f"turn:{table_id}" and push["data"]["table_id"] == table_id
    assert push["badge"] == 1
    inbox = (await rpc(bruno, "ListInbox")).notifications
    assert [n.table_id for n in inbox if n.kind == K.NOTIFICATION_KIND_YOUR_TURN] == [table_id]
    waiting = (await rpc(bruno, "ListWaitingGames")).games
    assert [g.table_id for g in waiting] == [table_id] and waiting[0].game == GAME

    # Watching the table (an open stream), the next decision is not pushed; closed again, it is.
    watcher = asyncio.create_task(anext(aiter(bruno.updates(table_id, 10**9))))
    await asyncio.sleep(0.5)
    assert await act_once(bruno, table_id)  # Bruno plays his turn himself ...
    await asyncio.sleep(0.1)
    await until_turn_of(bruno, [anna], table_id)  # ... and the next one comes to him
    await asyncio.sleep(1.5)
    assert len(gateway.of_kind("YOUR_TURN", "bruno-phone")) == 1
    watcher.cancel()
    await asyncio.gather(watcher, return_exceptions=True)
    await until(lambda: pushed(2), 20)


async def test_time_is_almost_up_at_80_percent_and_codes(players: list[StammtischClient],
                                                          gateway: Gateway) -> None:
    anna, bruno, carla = players
    await rpc(carla, "RegisterPushToken", platform=K.PUSH_PLATFORM_APNS, token="carla-phone",
              app_id="de.example.stammtisch")
    table, code = await create_private_table(anna, GAME, 3, turn_seconds=6)
    await rpc(carla, "BlockPlayer", player_id=anna.player_id)
    assert await refused(carla, "JoinTableByCode", code="ZZZZZZ") == Code.NOT_FOUND
    assert await refused(bruno, "JoinTableByCode", code="O0O0O0") == Code.INVALID_ARGUMENT
    await rpc(carla, "UnblockPlayer", player_id=anna.player_id)
    await rpc(anna, "BlockPlayer", player_id=carla.player_id)
    assert await refused(carla, "JoinTableByCode", code=code) == Code.PERMISSION_DENIED
    await rpc(anna, "UnblockPlayer", player_id=carla.player_id)
    joined, seat = await join_by_code(carla, code.lower())
    assert seat == 1 and joined.table_id == table.table_id
    _, seat = await join_by_code(bruno, code)
    assert seat == 2
    for client in (anna, bruno, carla):
        await client.ready(table.table_id)
    await until_turn_of(carla, [anna, bruno], table.table_id)

    async def alarmed() -> bool:
        return bool(gateway.of_kind("TIME_ALMOST_UP", "carla-phone"))
    await until(alarmed, 15)
    kinds = [n.kind for n in (await rpc(carla, "ListInbox")).notifications]
    assert K.NOTIFICATION_KIND_TIME_ALMOST_UP in kinds and K.NOTIFICATION_KIND_YOUR_TURN in kinds
    assert (await anna.get_table(table.table_id)).status == lobby_pb2.TABLE_STATUS_PLAYING


async def test_a_decision_made_while_no_clubs_replica_ran_is_reminded_when_one_starts(
        settings: Settings, gateway: Gateway) -> None:
    others = [name for name in SERVICE_NAMES if name != "clubs"]
    async with running_services(settings, others) as running:
        addresses = {item.service.name: f"127.0.0.1:{item.port}" for item in running}
        async with running_services(settings, ["clubs"]) as (clubs,):
            endpoints = Endpoints.of({**addresses, "clubs": f"127.0.0.1:{clubs.port}"})
            anna, bruno = StammtischClient(endpoints), StammtischClient(endpoints)
            await anna.login("Anna")
            await bruno.login("Bruno")
            await befriend(anna, bruno)
            await rpc(bruno, "RegisterPushToken", platform=K.PUSH_PLATFORM_FCM, token="bruno-phone",
                      app_id="de.example.stammtisch")
            table, code = await create_private_table(anna, GAME, 3, turn_seconds=86_400)
            await join_by_code(bruno, code)
            await anna.add_bot(table.table_id)
        try:  # no clubs replica runs now: the game goes on, its news unheard
            await anna.ready(table.table_id)
            await bruno.ready(table.table_id)
            await until_turn_of(bruno, [anna], table.table_id)
            await asyncio.sleep(1.0)
            assert not gateway.of_kind("YOUR_TURN")
            async with running_services(settings, ["clubs"]):

                async def pushed() -> bool:
                    return bool(gateway.of_kind("YOUR_TURN", "bruno-phone"))
                await until(pushed, 15)
        finally:
            await anna.close()
            await bruno.close()

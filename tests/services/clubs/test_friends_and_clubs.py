"""Friends, presence, clubs, chat and the inbox through the real API of a stack in this process,
with a real HTTP push gateway."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import AsyncIterator, Iterator, Mapping

import grpc
import pytest

from services.tools.perf.push_gateway import Gateway, push_gateway
from shared.api.stammtisch.v1 import accounts_pb2
from shared.api.stammtisch.v1 import clubs_pb2 as K
from shared.config import Settings
from shared.sdk.client import Endpoints, StammtischClient
from tests.support.clubs import refused, rpc, until

pytestmark = pytest.mark.integration
Code = grpc.StatusCode


@pytest.fixture
def gateway() -> Iterator[Gateway]:
    with push_gateway() as gw:
        yield gw


@pytest.fixture
def settings(settings: Settings, gateway: Gateway) -> Settings:
    return dataclasses.replace(settings, push_gateway_url=gateway.url)


@pytest.fixture
async def players(stack: Mapping[str, str]) -> AsyncIterator[list[StammtischClient]]:
    clients = [StammtischClient(Endpoints.of(stack)) for _ in range(3)]
    for client, name in zip(clients, ("Anna", "Bruno", "Carla"), strict=True):
        await client.login(name)
    yield clients
    for client in clients:
        await client.close()


async def friends_of(client: StammtischClient) -> dict[str, K.Friend]:
    reply = await rpc(client, "ListFriends")
    return {friend.player_id: friend for friend in reply.friends}


async def test_friends_request_accept_presence_and_block(players: list[StammtischClient]) -> None:
    anna, bruno, carla = players
    reply = await rpc(anna, "RequestFriend", player_id=bruno.player_id)
    assert reply.friend.state == K.FRIEND_STATE_REQUEST_SENT and reply.friend.name == "Bruno"
    assert (await friends_of(bruno))[anna.player_id].state == K.FRIEND_STATE_REQUEST_RECEIVED
    inbox = await rpc(bruno, "ListInbox")
    assert [n.kind for n in inbox.notifications] == [K.NOTIFICATION_KIND_FRIEND_REQUEST]
    assert inbox.unread_count == 1

    await rpc(bruno, "AnswerFriendRequest", player_id=anna.player_id, accept=True)
    assert (await friends_of(anna))[bruno.player_id].state == K.FRIEND_STATE_FRIEND
    assert (await friends_of(anna))[bruno.player_id].presence == K.PRESENCE_OFFLINE

    stream = bruno.clubs.WatchInbox(K.WatchInboxRequest(), metadata=bruno.auth)
    assert (await stream.read()).unread_count == 1  # the request (the acceptance went to Anna)
    assert (await friends_of(anna))[bruno.player_id].presence == K.PRESENCE_ONLINE
    await rpc(bruno, "SetPresence", table_id="t-1")
    seen = (await friends_of(anna))[bruno.player_id]
    assert (seen.presence, seen.table_id) == (K.PRESENCE_AT_TABLE, "t-1")
    assert bruno.player_id not in await friends_of(carla)  # presence is for friends only
    stream.cancel()

    async def offline() -> bool:
        return (await friends_of(anna))[bruno.player_id].presence == K.PRESENCE_OFFLINE
    await until(offline)

    # Carla blocks Anna: Anna can no longer ask her.
    await rpc(carla, "BlockPlayer", player_id=anna.player_id)
    assert await refused(anna, "RequestFriend", player_id=carla.player_id) == Code.PERMISSION_DENIED
    for bad in ("", "x" * 32, anna.player_id):
        assert await refused(anna, "RequestFriend", player_id=bad) == Code.INVALID_ARGUMENT
    assert await refused(anna, "AnswerFriendRequest", player_id=carla.player_id) == Code.NOT_FOUND
    await rpc(anna, "RemoveFriend", player_id=bruno.player_id)
    assert await friends_of(bruno) == {}


async def test_friends_list_pages(players: list[StammtischClient], stack: Mapping[str, str]) -> None:
    anna = players[0]
    others = [StammtischClient(Endpoints.of(stack)) for _ in range(5)]
    try:
        for index, other in enumerate(others):
            await other.login(f"O{index}")
            await rpc(anna, "RequestFriend", player_id=other.player_id)
        seen: list[str] = []
        token = ""
        while True:
            reply = await rpc(anna, "ListFriends", page_size=2, page_token=token)
            assert len(reply.friends) <= 2
            seen += [f.player_id for f in reply.friends]
            token = reply.next_page_token
            if not token:
                break
        assert seen == sorted(o.player_id for o in others)
    finally:
        for other in others:
            await other.close()


async def test_a_club_with_code_roles_chat_and_moderation(players: list[StammtischClient]) -> None:
    anna, bruno, carla = players
    club = (await rpc(anna, "CreateClub", name="Donnerstagsrunde", description="Jeden Donnerstag",
                      join_policy=K.CLUB_JOIN_POLICY_INVITATION, time_zone="Europe/Berlin")).club
    club_id = club.club_id
    assert len(club.code) == 6 and club.my_role == K.CLUB_ROLE_OWNER
    assert await refused(anna, "CreateClub", name="x", join_policy=K.CLUB_JOIN_POLICY_PUBLIC) \
        == Code.INVALID_ARGUMENT
    assert await refused(anna, "CreateClub", name="Club", join_policy=K.CLUB_JOIN_POLICY_PUBLIC,
                         time_zone="Mars/Olympus") == Code.INVALID_ARGUMENT
    # Not a member: no code, and no joining by id.
    assert (await rpc(bruno, "GetClub", club_id=club_id)).club.code == ""
    assert await refused(bruno, "JoinClub", club_id=club_id) == Code.PERMISSION_DENIED
    assert await refused(bruno, "JoinClub", code="000000") == Code.INVALID_ARGUMENT
    joined = await rpc(bruno, "JoinClub", code=club.code.lower())
    assert joined.club.member_count == 2 and joined.club.my_role == K.CLUB_ROLE_MEMBER
    # Bruno's app is open, but Anna is no friend of his: she does not see him online.
    app = bruno.clubs.WatchInbox(K.WatchInboxRequest(), metadata=bruno.auth)
    await app.read()
    seen = {m.name: m.presence for m in (await rpc(anna, "ListClubMembers", club_id=club_id)).members}
    assert seen == {"Anna": K.PRESENCE_OFFLINE, "Bruno": K.PRESENCE_OFFLINE}
    assert {m.name: m.presence for m in (await rpc(bruno, "ListClubMembers", club_id=club_id)).members}[
        "Bruno"] == K.PRESENCE_ONLINE
    app.cancel()

    # Chat, and moderation.
    line = (await rpc(bruno, "SendClubMessage", club_id=club_id, text=" Servus! ")).message
    assert line.text == "Servus!" and line.name == "Bruno"
    for bad in ("", "x" * 501, "bell\x07"):
        assert await refused(bruno, "SendClubMessage", club_id=club_id, text=bad) == Code.INVALID_ARGUMENT
    assert await refused(carla, "SendClubMessage", club_id=club_id, text="hi") == Code.PERMISSION_DENIED
    await rpc(anna, "DeleteClubMessage", club_id=club_id, message_id=line.message_id)
    await rpc(anna, "MuteMember", club_id=club_id, player_id=bruno.player_id, seconds=60)
    assert await refused(bruno, "SendClubMessage", club_id=club_id, text="hallo?") == Code.FAILED_PRECONDITION
    lines = (await rpc(anna, "ListClubMessages", club_id=club_id)).messages
    assert [(m.deleted, m.text) for m in lines] == [(True, "")]
    # A member may not kick; the chat limit holds (10 lines in 10 s).
    assert await refused(bruno, "KickMember", club_id=club_id, player_id=anna.player_id) \
        == Code.PERMISSION_DENIED
    for index in range(10):
        await rpc(anna, "SendClubMessage", club_id=club_id, text=f"line {index}")
    assert await refused(anna, "SendClubMessage", club_id=club_id, text="x") == Code.RESOURCE_EXHAUSTED

    # Invitation to Carla, ownership handed to Bruno, Anna leaves, Bruno bans Carla and deletes.
    await rpc(anna, "InviteToClub", club_id=club_id, player_id=carla.player_id)
    invitation = (await rpc(carla, "ListInbox")).notifications[0]
    assert (invitation.kind, invitation.code) == (K.NOTIFICATION_KIND_CLUB_INVITATION, club.code)
    await rpc(carla, "JoinClub", club_id=club_id)
    await rpc(anna, "SetClubRole", club_id=club_id, player_id=bruno.player_id, role=K.CLUB_ROLE_OWNER)
    assert await refused(bruno, "LeaveClub", club_id=club_id) == Code.FAILED_PRECONDITION
    await rpc(anna, "LeaveClub", club_id=club_id)
    await rpc(bruno, "KickMember", club_id=club_id, player_id=carla.player_id, ban=True)
    assert await refused(carla, "JoinClub", code=club.code) == Code.PERMISSION_DENIED
    members = (await rpc(bruno, "ListClubMembers", club_id=club_id)).members
    assert [(m.name, m.role) for m in members] == [("Bruno", K.CLUB_ROLE_OWNER)]
    await rpc(bruno, "DeleteClub", club_id=club_id)
    assert await refused(bruno, "GetClub", club_id=club_id) == Code.NOT_FOUND
    assert (await rpc(bruno, "ListMyClubs")).clubs == []


async def test_code_guesses_are_rate_limited(players: list[StammtischClient]) -> None:
    carla = players[2]
    with pytest.raises(grpc.aio.AioRpcError) as wrong:
        await rpc(carla, "JoinClub", code="ABCDEF")
    assert wrong.value.details() == "a club with this code not found"  # said once, as a sentence
    codes = [await refused(carla, "JoinClub", code="ABCDEF") for _ in range(10)]
    assert codes == [Code.NOT_FOUND] * 9 + [Code.RESOURCE_EXHAUSTED]


async def test_the_inbox_is_live_and_pushes_with_retries(players: list[StammtischClient],
                                                         gateway: Gateway) -> None:
    anna, bruno, _ = players
    await rpc(bruno, "RegisterPushToken", platform=K.PUSH_PLATFORM_FCM, token="bruno-phone-token",
              app_id="de.example.stammtisch")
    stream = bruno.clubs.WatchInbox(K.WatchInboxRequest(), metadata=bruno.auth)
    assert (await stream.read()).unread_count == 0
    gateway.fail_next = 2  # the first two tries fail: the outbox retries with backoff
    await rpc(anna, "RequestFriend", player_id=bruno.player_id)
    live = await asyncio.wait_for(stream.read(), 5)
    assert live.notification.kind == K.NOTIFICATION_KIND_FRIEND_REQUEST and live.unread_count == 1
    stream.cancel()

    async def pushed() -> bool:
        return bool(gateway.of_kind("FRIEND_REQUEST", "bruno-phone-token"))
    await until(pushed, 20)
    (body,) = gateway.of_kind("FRIEND_REQUEST")
    assert body["platform"] == "fcm" and body["app_id"] == "de.example.stammtisch"
    assert body["notification_id"] == live.notification.notification_id
    assert body["idempotency_key"].startswith(body["notification_id"] + ":")
    assert (await rpc(bruno, "MarkRead", all=True)).unread_count == 0

    # Muted kinds still reach the inbox, not the phone.
    await rpc(anna, "SetNotificationPreferences", preferences=K.NotificationPreferences(
        muted_kinds=[K.NOTIFICATION_KIND_FRIEND_ACCEPTED]))
    await rpc(anna, "RegisterPushToken", platform=K.PUSH_PLATFORM_APNS, token="anna-phone-token",
              app_id="de.example.stammtisch")
    await rpc(bruno, "AnswerFriendRequest", player_id=anna.player_id, accept=True)
    await rpc(bruno, "InviteToClub", club_id=(await rpc(bruno, "CreateClub", name="Skatfreunde",
                                                        join_policy=K.CLUB_JOIN_POLICY_PUBLIC)).club.club_id,
              player_id=anna.player_id)

    async def invited() -> bool:
        return bool(gateway.of_kind("CLUB_INVITATION", "anna-phone-token"))
    await until(invited, 10)
    assert not gateway.of_kind("FRIEND_ACCEPTED")
    kinds = [n.kind for n in (await rpc(anna, "ListInbox")).notifications]
    assert kinds == [K.NOTIFICATION_KIND_CLUB_INVITATION, K.NOTIFICATION_KIND_FRIEND_ACCEPTED]
    assert await refused(bruno, "RegisterPushToken", platform=K.PUSH_PLATFORM_FCM, token="short",
                         app_id="x") == Code.INVALID_ARGUMENT


async def test_my_friends_clubs_inbox_and_tokens_are_exported_and_deleted(
        players: list[StammtischClient]) -> None:
    anna, bruno, _ = players
    club = (await rpc(anna, "CreateClub", name="Skatrunde", join_policy=K.CLUB_JOIN_POLICY_PUBLIC)).club
    await rpc(bruno, "JoinClub", club_id=club.club_id)
    await rpc(anna, "RequestFriend", player_id=bruno.player_id)
    await rpc(bruno, "AnswerFriendRequest", player_id=anna.player_id, accept=True)
    await rpc(anna, "RegisterPushToken", platform=K.PUSH_PLATFORM_FCM, token="anna-secret-token",
              app_id="de.example.stammtisch")
    reply = await anna.accounts.ExportMyData(accounts_pb2.ExportMyDataRequest(), metadata=anna.auth)
    data = json.loads(reply.data_json)["clubs"]
    assert [(r["player_id"], r["state"]) for r in data["relations"]] == [(bruno.player_id, "friend")]
    assert [(c["club_id"], c["role"]) for c in data["clubs"]] == [(club.club_id, K.CLUB_ROLE_OWNER)]
    assert [n["kind"] for n in data["inbox"]] == [K.NOTIFICATION_KIND_FRIEND_ACCEPTED]
    assert [d["app_id"] for d in data["push_devices"]] == ["de.example.stammtisch"]
    assert "anna-secret-token" not in reply.data_json

    await anna.accounts.DeleteMyAccount(accounts_pb2.DeleteMyAccountRequest(confirm=True), metadata=anna.auth)
    assert await friends_of(bruno) == {}
    handed = (await rpc(bruno, "GetClub", club_id=club.club_id)).club
    assert (handed.owner_id, handed.my_role, handed.member_count) == (bruno.player_id, K.CLUB_ROLE_OWNER, 1)

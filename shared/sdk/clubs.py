"""Friends, clubs, private tables and the inbox through the real API (ClubsService and the lobby).

Thin helpers over the stubs on :class:`StammtischClient` (``client.clubs``), for apps, bots, the
terminal client and load tests; every call acts as the logged-in player.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Any

from shared.api.stammtisch.v1 import clubs_pb2, common_pb2, lobby_pb2
from shared.sdk.client import StammtischClient

PLATFORMS = {"apns": clubs_pb2.PUSH_PLATFORM_APNS, "fcm": clubs_pb2.PUSH_PLATFORM_FCM}


async def call(client: StammtischClient, method: str, **fields: Any) -> Any:
    """Call a ClubsService method, the request built from ``fields`` (``call(c, "JoinClub", code=...)``)."""
    request = getattr(clubs_pb2, f"{method}Request")(**fields)
    return await getattr(client.clubs, method)(request, metadata=client.auth)


async def befriend(client: StammtischClient, other: StammtischClient) -> None:
    """Make two logged-in players friends (a request and its acceptance)."""
    await call(client, "RequestFriend", player_id=other.player_id)
    await call(other, "AnswerFriendRequest", player_id=client.player_id, accept=True)


async def create_private_table(client: StammtischClient, game: str, seats: int,
                               turn_seconds: int | None = None,
                               options: Mapping[str, Any] | None = None) -> tuple[lobby_pb2.Table, str]:
    """A private table (not listed; players come by invitation or code) with the caller in seat
    0; returns it and its code. ``turn_seconds`` of minutes to days plays by notification."""
    table_options = common_pb2.TableOptions(turn_seconds=turn_seconds)
    table_options.game_options.update(options or {})
    reply = await client.lobby.CreateTable(lobby_pb2.CreateTableRequest(
        game=game, seats=seats, options=table_options, join=True, private=True), metadata=client.auth)
    client.remember_table(reply.table)
    return reply.table, reply.code


async def join_by_code(client: StammtischClient, code: str) -> tuple[lobby_pb2.Table, int]:
    """Sit down at a private table by its code; returns the table and the seat (-1: queued)."""
    reply = await call(client, "JoinTableByCode", code=code)
    return await client.get_table(reply.table_id), reply.seat


async def inbox(client: StammtischClient, unread_only: bool = False,
                page_size: int = 50) -> clubs_pb2.ListInboxResponse:
    """The first page of the inbox, newest first."""
    return await call(client, "ListInbox", unread_only=unread_only, page_size=page_size)


async def watch_inbox(client: StammtischClient) -> AsyncIterator[clubs_pb2.WatchInboxResponse]:
    """The live inbox: the unread count first, then each new notification (the player is online
    while this runs)."""
    stream = client.clubs.WatchInbox(clubs_pb2.WatchInboxRequest(), metadata=client.auth)
    try:
        async for reply in stream:
            yield reply
    finally:
        stream.cancel()


def kind_name(kind: int) -> str:
    """A NotificationKind as a short word ("YOUR_TURN")."""
    return str(clubs_pb2.NotificationKind.Name(kind)).removeprefix("NOTIFICATION_KIND_")  # type: ignore[arg-type]

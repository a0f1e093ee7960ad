"""The terminal side of friends, clubs, the inbox and private tables (services/host/clubs_cli.py
has the parsers). Every command logs in as the lasting player of a device file."""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Coroutine
from datetime import datetime
from typing import Any

import grpc

from shared.api.stammtisch.v1 import clubs_pb2 as K
from shared.sdk.client import Endpoints, StammtischClient
from shared.sdk.clubs import call, create_private_table, join_by_code, kind_name, watch_inbox
from shared.sdk.device import login_from_file
from shared.sdk.terminal import LineReader, leave_seat, play_game

PRESENCE = {K.PRESENCE_ONLINE: "online", K.PRESENCE_AT_TABLE: "at a table", K.PRESENCE_OFFLINE: "offline"}
STATES = {K.FRIEND_STATE_FRIEND: "friend", K.FRIEND_STATE_REQUEST_SENT: "asked by you",
          K.FRIEND_STATE_REQUEST_RECEIVED: "asks you", K.FRIEND_STATE_BLOCKED: "blocked"}
ROLES = {K.CLUB_ROLE_OWNER: "owner", K.CLUB_ROLE_ADMIN: "admin", K.CLUB_ROLE_MEMBER: "member"}
WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")


def run(coro: Coroutine[Any, Any, int]) -> int:
    """Run a command; a refusal is one line and exit code 1."""
    try:
        return asyncio.run(coro)
    except grpc.aio.AioRpcError as err:
        print(f"stammtisch: {err.code().name}: {err.details()}", file=sys.stderr)
        return 1


async def command(endpoints: Endpoints, args: argparse.Namespace) -> int:
    """Log in as the device's player, then do the parsed command."""
    async with StammtischClient(endpoints) as client:
        await login_from_file(client, args.device, args.name)
        handler = {"friends": _friends, "club": _club, "inbox": _inbox}[args.command]
        return await handler(client, args)


async def _friends(client: StammtischClient, args: argparse.Namespace) -> int:
    if args.action == "list":
        print(f"you: {client.name} ({client.player_id})")
        for friend in (await call(client, "ListFriends", page_size=200)).friends:
            where = f" at table {friend.table_id}" if friend.table_id else ""
            print(f"{friend.name:<20} {friend.player_id}  {STATES[friend.state]:<12} "
                  f"{PRESENCE[friend.presence]}{where}")
        return 0
    if not args.player_id:
        sys.exit(f"stammtisch friends {args.action}: give the player's id")
    method, fields = {"add": ("RequestFriend", {}), "accept": ("AnswerFriendRequest", {"accept": True}),
                      "decline": ("AnswerFriendRequest", {"accept": False}), "remove": ("RemoveFriend", {}),
                      "block": ("BlockPlayer", {}), "unblock": ("UnblockPlayer", {})}[args.action]
    await call(client, method, player_id=args.player_id, **fields)
    print(f"{args.action}: done")
    return 0


def _needs(args: argparse.Namespace, count: int, usage: str) -> list[str]:
    if len(args.arg) < count:
        sys.exit(f"stammtisch club {args.action} {usage}")
    return list(args.arg)


def _show(club: K.Club) -> str:
    code = f" code {club.code}" if club.code else ""
    role = f" ({ROLES[club.my_role]})" if club.my_role else ""
    return f"{club.name}{role}: {club.club_id}{code}, {club.member_count} member(s)"


async def _club(client: StammtischClient, args: argparse.Namespace) -> int:
    action = args.action
    if action == "list":
        for club in (await call(client, "ListMyClubs")).clubs:
            print(_show(club))
        return 0
    if action == "create":
        _needs(args, 1, "NAME")
        policy = K.CLUB_JOIN_POLICY_PUBLIC if args.public else K.CLUB_JOIN_POLICY_INVITATION
        print(_show((await call(client, "CreateClub", name=" ".join(args.arg), join_policy=policy,
                                time_zone=args.zone)).club))
        return 0
    if action == "join":
        print(_show((await call(client, "JoinClub", code=_needs(args, 1, "CODE")[0])).club))
        return 0
    (club_id, *rest) = _needs(args, 1, "CLUB_ID")
    if action == "show":
        print(_show((await call(client, "GetClub", club_id=club_id)).club))
    elif action == "members":
        for member in (await call(client, "ListClubMembers", club_id=club_id, page_size=200)).members:
            role, presence = ROLES[member.role], PRESENCE[member.presence]
            print(f"{member.name:<20} {member.player_id}  {role:<7} {presence}")
    elif action == "chat":
        for line in reversed((await call(client, "ListClubMessages", club_id=club_id)).messages):
            print(f"[{line.message_id}] {line.name}: {'(deleted)' if line.deleted else line.text}")
    elif action == "say":
        await call(client, "SendClubMessage", club_id=club_id, text=" ".join(rest))
    elif action == "invite":
        await call(client, "InviteToClub", club_id=club_id, player_id=_needs(args, 2, "CLUB PLAYER")[1])
    elif action == "leave":
        await call(client, "LeaveClub", club_id=club_id)
    elif action == "evening":
        _, weekday, at, game = _needs(args, 4, "CLUB WEEKDAY(mon..sun) HH:MM GAME")
        hours, _, minutes = at.partition(":")
        evening = K.ClubEvening(weekday=WEEKDAYS.index(weekday[:3].lower()) + 1,
                                minute=int(hours) * 60 + int(minutes or 0), game=game)
        reply = (await call(client, "SetClubEvening", club_id=club_id, evening=evening)).evening
        print(f"next evening: {datetime.fromtimestamp(reply.next_at.seconds):%a %d.%m. %H:%M} (local)")
    elif action == "checkin":
        reply = (await call(client, "CheckInClubEvening", club_id=club_id)).evening
        print(f"checked in: {reply.checked_in} member(s) so far")
    else:
        season = await call(client, "GetClubSeason", club_id=club_id)
        print(f"season {season.season}{' (closed)' if season.closed else ''}, "
              f"{len(season.tournament_ids)} evening(s)")
        for line in season.lines:
            print(f"{line.rank:>3}. {line.name:<20} {line.points:>6.1f} points, {line.evenings} evening(s), "
                  f"{line.wins} win(s)")
    return 0


def _note(note: K.Notification) -> str:
    stamp = datetime.fromtimestamp(note.created_at.seconds).strftime("%d.%m. %H:%M")
    extra = "".join(f" {label} {value}" for label, value in (("table", note.table_id), ("club", note.club_id),
                                                               ("code", note.code)) if value)
    return f"{'  ' if note.read else '* '}{stamp} {kind_name(note.kind):<16} {note.text}{extra}"


async def _inbox(client: StammtischClient, args: argparse.Namespace) -> int:
    if args.waiting:
        for game in (await call(client, "ListWaitingGames")).games:
            left = game.deadline.seconds - time.time()
            print(f"{game.game:<14} table {game.table_id}: {left / 3600:.1f} h left")
        return 0
    if args.watch:
        async for news in watch_inbox(client):
            if news.HasField("notification"):
                print(_note(news.notification), flush=True)
            print(f"({news.unread_count} unread)", flush=True)
        return 0
    reply = await call(client, "ListInbox")
    for note in reply.notifications:
        print(_note(note))
    print(f"({reply.unread_count} unread)")
    if args.read:
        await call(client, "MarkRead", all=True)
    return 0


async def play_private(endpoints: Endpoints, game: str, seats: int, turn_seconds: int, invites: list[str],
                       code: str, name: str, device: str) -> int:
    """Create a private table (and invite players, seats held for them) or sit down at one by its
    code; wait until every seat is taken, then play it in the terminal."""
    async with StammtischClient(endpoints) as client:
        await login_from_file(client, device, name)
        if code:
            table, _seat = await join_by_code(client, code)
        else:
            table, code = await create_private_table(client, game, seats, turn_seconds or None)
            for player_id in invites:
                await call(client, "InviteToTable", table_id=table.table_id, player_id=player_id,
                           hold_seat=True)
            print(f"private table {table.table_id}: code {code} · others join with "
                  f"`stammtisch play --code {code}`")
        await call(client, "SetPresence", table_id=table.table_id)
        while any(not seat.player_id for seat in (await client.get_table(table.table_id)).seats):
            await asyncio.sleep(1.0)
        reader = LineReader()
        try:
            await client.ready(table.table_id)
            final = await play_game(client, table.table_id, reader)
        except (asyncio.CancelledError, KeyboardInterrupt, EOFError):
            await leave_seat(client, table.table_id, table.game)
            return 130
        finally:
            reader.close()
            await call(client, "SetPresence", table_id="")
        print(f"final totals: {final.view.get('scores', [])}")
        return 0

"""The ClubsService servicer: checks each request, then changes friends, clubs, chat or the inbox.

Every call acts as the token's player. Permissions follow the roles: members post and invite
(in a public club), admins also mute, delete lines and kick members, the owner everything.
"""

from __future__ import annotations

import asyncio
import math
import time
import uuid
from collections.abc import AsyncIterator
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import grpc
import orjson

from services.clubs.chat import Chat, Line, check_text
from services.clubs.clubs import ADMIN, INVITATION, MEMBER, OWNER, PUBLIC, Club, Clubs, Member, check_club_id
from services.clubs.evenings import ClubEvenings, evening_of
from services.clubs.friends import BLOCKED, FRIEND, MAX_RELATIONS, PRESENCE_TTL, RECEIVED, SENT, Friends
from services.clubs.inbox import Inbox, Note, note_proto
from services.clubs.limits import Limits
from services.clubs.push import Devices, Preferences
from services.clubs.ratings import ClubRatings
from services.clubs.turns import TurnNotifier
from services.lobby.convert import table_proto
from services.lobby.model import LobbyTable, Status
from services.lobby.players import PlayerNames
from services.lobby.tables import Lobby
from shared.api.stammtisch.v1 import clubs_pb2, clubs_pb2_grpc, lobby_pb2
from shared.errors import NotFound
from shared.ids import check_player_id, check_table_id
from shared.obs.metrics import CLUB_MESSAGES, CLUBS_CREATED, FRIEND_REQUESTS, OPEN_STREAMS
from shared.rpc.auth import caller
from shared.rpc.catalog import game_named
from shared.rpc.errors import ServiceError, invalid, not_found, precondition
from shared.tables.placement import play_port

K = clubs_pb2
DEFAULT_PAGE = 50
MAX_PAGE = 200
MAX_MUTE_SECONDS = 30 * 86_400
DEFAULT_HOLD_SECONDS = 86_400
MIN_HOLD_SECONDS, MAX_HOLD_SECONDS = 60, 7 * 86_400
_STATE_NAMES = {FRIEND: K.FRIEND_STATE_FRIEND, SENT: K.FRIEND_STATE_REQUEST_SENT,
                RECEIVED: K.FRIEND_STATE_REQUEST_RECEIVED, BLOCKED: K.FRIEND_STATE_BLOCKED}


def denied(message: str) -> ServiceError:
    """The caller's role or a block does not allow it."""
    return ServiceError(grpc.StatusCode.PERMISSION_DENIED, message)


def page_size(size: int) -> int:
    """A requested page size (0: the default), else INVALID_ARGUMENT."""
    if not 0 <= size <= MAX_PAGE:
        raise invalid(f"page_size must be 0 (default {DEFAULT_PAGE}) to {MAX_PAGE}")
    return size or DEFAULT_PAGE


def check_zone(zone: str) -> str:
    """An IANA time zone name ('' is UTC), else INVALID_ARGUMENT."""
    if not zone:
        return ""
    try:
        if len(zone) > 64:
            raise ValueError(zone)
        ZoneInfo(zone)
    except (ZoneInfoNotFoundError, ValueError, OSError) as exc:
        raise invalid("time_zone must be an IANA time zone such as Europe/Berlin") from exc
    return zone


def check_club_name(name: str) -> str:
    """A club name: 3 to 40 characters of plain text."""
    name = name.strip()
    if not 3 <= len(name) <= 40:
        raise invalid("name must be 3 to 40 characters")
    return check_text(name)


def _ts(message: object, field: str, seconds: float) -> None:
    getattr(message, field).FromNanoseconds(int(seconds * 1e9))


class ClubServicer(clubs_pb2_grpc.ClubsServiceServicer):
    """Friends, clubs, chat, invitations, inbox and push tokens."""

    def __init__(self, friends: Friends, clubs: Clubs, chat: Chat, inbox: Inbox, devices: Devices,
                 limits: Limits, names: PlayerNames, lobby: Lobby, turns: TurnNotifier,
                 evenings: ClubEvenings, ratings: ClubRatings) -> None:
        self.friends = friends
        self.clubs = clubs
        self.chat = chat
        self.inbox = inbox
        self.devices = devices
        self.limits = limits
        self.names = names
        self.lobby = lobby
        self.turns = turns
        self.evenings = evenings
        self.ratings = ratings

    async def _name(self, player_id: str) -> str:
        return (await self.names.names([player_id]))[0]

    # Friends

    async def _friend_proto(self, me: str, other: str) -> clubs_pb2.Friend:
        relations = {r.other: r for r in await self.friends.all(me)}
        return (await self._friend_protos([relations[other]]))[0] if other in relations else K.Friend()

    async def _friend_protos(self, relations: list) -> list[clubs_pb2.Friend]:  # type: ignore[type-arg]
        ids = [r.other for r in relations]
        names = await self.names.names(ids)
        presence = await self.friends.presence(ids)
        replies = []
        for relation, name, (online, table) in zip(relations, names, presence, strict=True):
            reply = K.Friend(player_id=relation.other, name=name, state=_STATE_NAMES[relation.state],
                             presence=K.PRESENCE_OFFLINE)
            if relation.state == FRIEND and online:
                reply.presence = K.PRESENCE_AT_TABLE if table else K.PRESENCE_ONLINE
                reply.table_id = table
            _ts(reply, "since", relation.since)
            replies.append(reply)
        return replies

    async def _other(self, player_id: str) -> tuple[str, str]:
        me = caller().player_id
        other = check_player_id(player_id)
        if other == me:
            raise invalid("player_id is the caller")
        return me, other

    async def RequestFriend(self, request: clubs_pb2.RequestFriendRequest,
                            context: grpc.aio.ServicerContext) -> clubs_pb2.RequestFriendResponse:
        me, other = await self._other(request.player_id)
        if await self.friends.blocked_by(me, other):
            raise denied("this player does not accept requests from you")
        mine = await self.friends.relation(me, other)
        if mine == BLOCKED:
            raise precondition("you blocked this player; unblock first")
        if mine == FRIEND:
            raise precondition("already friends")
        if mine == RECEIVED:
            return K.RequestFriendResponse(friend=await self._accept(me, other))
        if mine != SENT:
            if max(await self.friends.count(me), await self.friends.count(other)) >= MAX_RELATIONS:
                raise precondition(f"at most {MAX_RELATIONS} friends and requests")
            await self.limits.check("friend", me)
            await self.friends.set(other, me, RECEIVED)
            await self.friends.set(me, other, SENT)
            FRIEND_REQUESTS.labels(outcome="sent").inc()
            await self.inbox.add(other, K.NOTIFICATION_KIND_FRIEND_REQUEST,
                                 f"{caller().name} asks to be friends", from_player_id=me)
        return K.RequestFriendResponse(friend=await self._friend_proto(me, other))

    async def _accept(self, me: str, other: str) -> clubs_pb2.Friend:
        await self.friends.set(other, me, FRIEND)
        await self.friends.set(me, other, FRIEND)
        FRIEND_REQUESTS.labels(outcome="accepted").inc()
        await self.inbox.add(other, K.NOTIFICATION_KIND_FRIEND_ACCEPTED,
                             f"{caller().name} is now your friend", from_player_id=me)
        return await self._friend_proto(me, other)

    async def AnswerFriendRequest(self, request: clubs_pb2.AnswerFriendRequestRequest,
                                  context: grpc.aio.ServicerContext) -> clubs_pb2.AnswerFriendRequestResponse:
        me, other = await self._other(request.player_id)
        if await self.friends.relation(me, other) != RECEIVED:
            raise not_found("friend request from this player")
        if request.accept:
            return K.AnswerFriendRequestResponse(friend=await self._accept(me, other))
        await self.friends.set(other, me, None)
        await self.friends.set(me, other, None)
        FRIEND_REQUESTS.labels(outcome="declined").inc()
        return K.AnswerFriendRequestResponse()

    async def RemoveFriend(self, request: clubs_pb2.RemoveFriendRequest,
                           context: grpc.aio.ServicerContext) -> clubs_pb2.RemoveFriendResponse:
        me, other = await self._other(request.player_id)
        if await self.friends.relation(me, other) in (FRIEND, SENT, RECEIVED):
            if await self.friends.relation(other, me) != BLOCKED:
                await self.friends.set(other, me, None)
            await self.friends.set(me, other, None)
        return K.RemoveFriendResponse()

    async def BlockPlayer(self, request: clubs_pb2.BlockPlayerRequest,
                          context: grpc.aio.ServicerContext) -> clubs_pb2.BlockPlayerResponse:
        me, other = await self._other(request.player_id)
        if await self.friends.relation(other, me) != BLOCKED:
            await self.friends.set(other, me, None)
        elif await self.friends.count(me) >= MAX_RELATIONS:
            raise precondition(f"at most {MAX_RELATIONS} friends, requests and blocks")
        await self.friends.set(me, other, BLOCKED)
        return K.BlockPlayerResponse()

    async def UnblockPlayer(self, request: clubs_pb2.UnblockPlayerRequest,
                            context: grpc.aio.ServicerContext) -> clubs_pb2.UnblockPlayerResponse:
        me, other = await self._other(request.player_id)
        if await self.friends.relation(me, other) == BLOCKED:
            await self.friends.set(me, other, None)
        return K.UnblockPlayerResponse()

    async def ListFriends(self, request: clubs_pb2.ListFriendsRequest,
                          context: grpc.aio.ServicerContext) -> clubs_pb2.ListFriendsResponse:
        size = page_size(request.page_size)
        if request.page_token:
            check_player_id(request.page_token)
        states = {v: k for k, v in _STATE_NAMES.items()}
        if request.state and request.state not in states:
            raise invalid("state is not a FriendState")
        wanted = states.get(request.state)
        relations = [r for r in await self.friends.all(caller().player_id)
                     if r.other > request.page_token and wanted in (None, r.state)]
        page = relations[:size]
        more = len(relations) > size
        return K.ListFriendsResponse(friends=await self._friend_protos(page),
                                     next_page_token=page[-1].other if more else "")

    async def SetPresence(self, request: clubs_pb2.SetPresenceRequest,
                          context: grpc.aio.ServicerContext) -> clubs_pb2.SetPresenceResponse:
        table_id = check_table_id(request.table_id) if request.table_id else ""
        await self.friends.set_table(caller().player_id, table_id)
        return K.SetPresenceResponse()

    # Clubs

    async def _club_proto(self, club: Club, me: str) -> clubs_pb2.Club:
        member = await self.clubs.member(club.club_id, me)
        reply = K.Club(club_id=club.club_id, name=club.name, description=club.description,
                       join_policy=club.join_policy, owner_id=club.owner_id,  # type: ignore[arg-type]
                       member_count=await self.clubs.member_count(club.club_id), time_zone=club.time_zone,
                       my_role=member.role if member else 0)  # type: ignore[arg-type]
        if member is not None:
            reply.code = club.code
        _ts(reply, "created_at", club.created_at)
        return reply

    async def _member_of(self, club_id: str, least: int = MEMBER) -> tuple[Club, Member]:
        """The club and the caller's membership with at least the role ``least``."""
        club = await self.clubs.get(check_club_id(club_id))
        member = await self.clubs.member(club.club_id, caller().player_id)
        if member is None:
            raise denied("only members of the club may do this")
        if member.role < least:
            raise denied("your role in the club does not allow this")
        return club, member

    async def CreateClub(self, request: clubs_pb2.CreateClubRequest,
                         context: grpc.aio.ServicerContext) -> clubs_pb2.CreateClubResponse:
        name = check_club_name(request.name)
        description = check_text(request.description) if request.description.strip() else ""
        if request.join_policy not in (PUBLIC, INVITATION):
            raise invalid("join_policy must be PUBLIC or INVITATION")
        zone = check_zone(request.time_zone)
        me = caller().player_id
        await self.limits.check("club", me)
        club = await self.clubs.create(me, name, description, request.join_policy, zone)
        CLUBS_CREATED.inc()
        return K.CreateClubResponse(club=await self._club_proto(club, me))

    async def GetClub(self, request: clubs_pb2.GetClubRequest,
                      context: grpc.aio.ServicerContext) -> clubs_pb2.GetClubResponse:
        club = await self.clubs.get(check_club_id(request.club_id))
        return K.GetClubResponse(club=await self._club_proto(club, caller().player_id))

    async def ListMyClubs(self, request: clubs_pb2.ListMyClubsRequest,
                          context: grpc.aio.ServicerContext) -> clubs_pb2.ListMyClubsResponse:
        me = caller().player_id
        replies = []
        for club_id in await self.clubs.of_player(me):
            try:
                replies.append(await self._club_proto(await self.clubs.get(club_id), me))
            except Exception:  # noqa: BLE001 (a club deleted meanwhile)
                continue
        return K.ListMyClubsResponse(clubs=replies)

    async def JoinClub(self, request: clubs_pb2.JoinClubRequest,
                       context: grpc.aio.ServicerContext) -> clubs_pb2.JoinClubResponse:
        me = caller().player_id
        if bool(request.club_id) == bool(request.code):
            raise invalid("give either club_id or code")
        if request.code:
            await self.limits.check("code", me)
            club = await self.clubs.by_code(request.code)
        else:
            club = await self.clubs.get(check_club_id(request.club_id))
            if club.join_policy != PUBLIC and not await self.clubs.is_invited(club.club_id, me):
                raise denied("this club takes members by code or invitation only")
        if await self.clubs.is_banned(club.club_id, me):
            raise denied("you are banned from this club")
        if await self.clubs.member(club.club_id, me) is None:
            await self.clubs.add_member(club.club_id, me)
        return K.JoinClubResponse(club=await self._club_proto(club, me))

    async def InviteToClub(self, request: clubs_pb2.InviteToClubRequest,
                           context: grpc.aio.ServicerContext) -> clubs_pb2.InviteToClubResponse:
        club, member = await self._member_of(request.club_id)
        me, other = await self._other(request.player_id)
        if club.join_policy != PUBLIC and member.role < ADMIN:
            raise denied("only admins invite to this club")
        if await self.friends.blocked_by(me, other):
            raise denied("this player does not accept invitations from you")
        if await self.clubs.member(club.club_id, other) is not None:
            raise precondition("already a member")
        await self.limits.check("invite", me)
        await self.clubs.invite(club.club_id, other)
        await self.inbox.add(other, K.NOTIFICATION_KIND_CLUB_INVITATION,
                             f"{caller().name} invites you to the club {club.name}",
                             from_player_id=me, club_id=club.club_id, code=club.code)
        return K.InviteToClubResponse()

    async def LeaveClub(self, request: clubs_pb2.LeaveClubRequest,
                        context: grpc.aio.ServicerContext) -> clubs_pb2.LeaveClubResponse:
        club, member = await self._member_of(request.club_id)
        if member.role == OWNER:
            raise precondition("the owner hands the club over (SetClubRole OWNER) or deletes it first")
        await self.clubs.remove_member(club.club_id, member.player_id)
        return K.LeaveClubResponse()

    async def ListClubMembers(self, request: clubs_pb2.ListClubMembersRequest,
                              context: grpc.aio.ServicerContext) -> clubs_pb2.ListClubMembersResponse:
        club, _ = await self._member_of(request.club_id)
        size = page_size(request.page_size)
        offset = 0
        if request.page_token:
            if not request.page_token.isdigit() or len(request.page_token) > 6:
                raise invalid("page_token is not one this call gave")
            offset = int(request.page_token)
        members = await self.clubs.members(club.club_id)
        page = members[offset:offset + size]
        ids = [m.player_id for m in page]
        names, presence = await self.names.names(ids), await self.friends.presence(ids)
        me = caller().player_id
        friends = {r.other for r in await self.friends.all(me) if r.state == FRIEND} | {me}
        replies = []
        for member, name, (online, table) in zip(page, names, presence, strict=True):
            online = online and member.player_id in friends  # presence is for friends only
            reply = K.ClubMember(player_id=member.player_id, name=name, role=member.role,  # type: ignore[arg-type]
                                 presence=(K.PRESENCE_AT_TABLE if table else K.PRESENCE_ONLINE)
                                 if online else K.PRESENCE_OFFLINE)
            _ts(reply, "joined_at", member.joined_at)
            if member.muted_until > time.time():
                _ts(reply, "muted_until", member.muted_until)
            replies.append(reply)
        more = offset + size < len(members)
        return K.ListClubMembersResponse(members=replies, next_page_token=str(offset + size) if more else "")

    async def SetClubRole(self, request: clubs_pb2.SetClubRoleRequest,
                          context: grpc.aio.ServicerContext) -> clubs_pb2.SetClubRoleResponse:
        club, me = await self._member_of(request.club_id, OWNER)
        _, other = await self._other(request.player_id)
        target = await self.clubs.member(club.club_id, other)
        if target is None:
            raise not_found("member")
        if request.role not in (MEMBER, ADMIN, OWNER):
            raise invalid("role must be MEMBER, ADMIN or OWNER")
        target.role = request.role
        if request.role == OWNER:
            me.role = ADMIN
            club.owner_id = other
            await self.clubs.put_member(club.club_id, me)
            await self.clubs.save(club)
        await self.clubs.put_member(club.club_id, target)
        return K.SetClubRoleResponse(club=await self._club_proto(club, caller().player_id))

    async def KickMember(self, request: clubs_pb2.KickMemberRequest,
                         context: grpc.aio.ServicerContext) -> clubs_pb2.KickMemberResponse:
        club, me = await self._member_of(request.club_id, ADMIN)
        _, other = await self._other(request.player_id)
        target = await self.clubs.member(club.club_id, other)
        if target is not None and target.role >= me.role:
            raise denied("you may only remove members of a lower role")
        if target is None and not request.ban:
            raise not_found("member")
        await self.clubs.remove_member(club.club_id, other, ban=request.ban)
        return K.KickMemberResponse()

    async def UnbanMember(self, request: clubs_pb2.UnbanMemberRequest,
                          context: grpc.aio.ServicerContext) -> clubs_pb2.UnbanMemberResponse:
        club, _ = await self._member_of(request.club_id, ADMIN)
        await self.clubs.unban(club.club_id, check_player_id(request.player_id))
        return K.UnbanMemberResponse()

    async def DeleteClub(self, request: clubs_pb2.DeleteClubRequest,
                         context: grpc.aio.ServicerContext) -> clubs_pb2.DeleteClubResponse:
        club, _ = await self._member_of(request.club_id, OWNER)
        await self.clubs.delete(club)
        return K.DeleteClubResponse()

    # Chat

    async def _line_proto(self, line: Line) -> clubs_pb2.ClubMessage:
        reply = K.ClubMessage(message_id=line.message_id, player_id=line.player_id,
                              name=await self._name(line.player_id), text=line.text, deleted=line.deleted)
        _ts(reply, "sent_at", line.sent_at)
        return reply

    async def SendClubMessage(self, request: clubs_pb2.SendClubMessageRequest,
                              context: grpc.aio.ServicerContext) -> clubs_pb2.SendClubMessageResponse:
        club, member = await self._member_of(request.club_id)
        text = check_text(request.text)
        if member.muted_until > time.time():
            raise precondition("you are muted in this club's chat")
        await self.limits.check("chat", member.player_id)
        line = await self.chat.post(club.club_id, member.player_id, text)
        CLUB_MESSAGES.inc()
        return K.SendClubMessageResponse(message=await self._line_proto(line))

    async def ListClubMessages(self, request: clubs_pb2.ListClubMessagesRequest,
                               context: grpc.aio.ServicerContext) -> clubs_pb2.ListClubMessagesResponse:
        club, _ = await self._member_of(request.club_id)
        if request.before_id < 0:
            raise invalid("before_id must be 0 or a message id")
        limit = page_size(request.limit)
        lines = await self.chat.page(club.club_id, request.before_id, limit)
        return K.ListClubMessagesResponse(messages=[await self._line_proto(line) for line in lines])

    async def DeleteClubMessage(self, request: clubs_pb2.DeleteClubMessageRequest,
                                context: grpc.aio.ServicerContext) -> clubs_pb2.DeleteClubMessageResponse:
        club, member = await self._member_of(request.club_id)
        if request.message_id <= 0:
            raise invalid("message_id must be a message id")
        line = await self.chat.get(club.club_id, request.message_id)
        if line.player_id != member.player_id and member.role < ADMIN:
            raise denied("only admins delete other members' messages")
        await self.chat.delete(club.club_id, line)
        return K.DeleteClubMessageResponse()

    async def MuteMember(self, request: clubs_pb2.MuteMemberRequest,
                         context: grpc.aio.ServicerContext) -> clubs_pb2.MuteMemberResponse:
        club, me = await self._member_of(request.club_id, ADMIN)
        _, other = await self._other(request.player_id)
        if not 0 <= request.seconds <= MAX_MUTE_SECONDS:
            raise invalid(f"seconds must be 0 to {MAX_MUTE_SECONDS}")
        target = await self.clubs.member(club.club_id, other)
        if target is None:
            raise not_found("member")
        if target.role >= me.role:
            raise denied("you may only mute members of a lower role")
        target.muted_until = time.time() + request.seconds if request.seconds else 0.0
        await self.clubs.put_member(club.club_id, target)
        return K.MuteMemberResponse()

    # Club evenings and seasons

    async def _evening_proto(self, club: Club) -> clubs_pb2.ClubEvening:
        evening = await self.evenings.get(club.club_id)
        if evening is None:
            return K.ClubEvening()
        reply = K.ClubEvening(weekday=evening.weekday, minute=evening.minute, game=evening.game,
                              table_size=evening.table_size, rounds=evening.rounds,
                              games_per_round=evening.games_per_round, turn_seconds=evening.turn_seconds,
                              checked_in=await self.evenings.checked_in(club))
        _ts(reply, "next_at", await self.evenings.next_at(club))
        return reply

    async def SetClubEvening(self, request: clubs_pb2.SetClubEveningRequest,
                             context: grpc.aio.ServicerContext) -> clubs_pb2.SetClubEveningResponse:
        club, _ = await self._member_of(request.club_id, ADMIN)
        await self.evenings.set(club, evening_of(request.evening))
        return K.SetClubEveningResponse(evening=await self._evening_proto(club))

    async def CheckInClubEvening(self, request: clubs_pb2.CheckInClubEveningRequest,
                                 context: grpc.aio.ServicerContext) -> clubs_pb2.CheckInClubEveningResponse:
        club, member = await self._member_of(request.club_id)
        await self.evenings.check_in(club, member.player_id)
        return K.CheckInClubEveningResponse(evening=await self._evening_proto(club))

    async def GetClubSeason(self, request: clubs_pb2.GetClubSeasonRequest,
                            context: grpc.aio.ServicerContext) -> clubs_pb2.GetClubSeasonResponse:
        club, _ = await self._member_of(request.club_id)
        if not 0 <= request.season <= club.season:
            raise invalid(f"season must be 0 (the current one) to {club.season}")
        season = request.season or club.season
        lines = [K.SeasonLine(**line) for line in await self.evenings.standing(club.club_id, season)]
        return K.GetClubSeasonResponse(season=season, lines=lines, closed=season < club.season,
                                       tournament_ids=await self.evenings.season_ids(club.club_id, season))

    async def CloseClubSeason(self, request: clubs_pb2.CloseClubSeasonRequest,
                              context: grpc.aio.ServicerContext) -> clubs_pb2.CloseClubSeasonResponse:
        club, _ = await self._member_of(request.club_id, ADMIN)
        return K.CloseClubSeasonResponse(season=await self.evenings.close_season(club))

    # Club tables, quick match among members, the club leaderboard

    def _table(self, table: LobbyTable) -> lobby_pb2.Table:
        return table_proto(table, play_port(self.lobby.settings, table.game, table.table_id))

    async def CreateClubTable(self, request: clubs_pb2.CreateClubTableRequest,
                              context: grpc.aio.ServicerContext) -> clubs_pb2.CreateClubTableResponse:
        club, _ = await self._member_of(request.club_id)
        table = await self.lobby.create(caller(), request.game, request.seats, request.options, True, True)
        await self.ratings.own_table(club.club_id, table.table_id)
        await self.clubs.add_table(club.club_id, table.table_id, table.created_at)
        return K.CreateClubTableResponse(table=self._table(table))

    async def _open_tables(self, club_id: str) -> list[LobbyTable]:
        """The club's tables that still exist (closed ones are dropped from its list)."""
        found = []
        for table_id in await self.clubs.tables(club_id):
            try:
                found.append(await self.lobby.get(table_id))
            except NotFound:
                await self.clubs.drop_table(club_id, table_id)
        return found

    async def ListClubTables(self, request: clubs_pb2.ListClubTablesRequest,
                             context: grpc.aio.ServicerContext) -> clubs_pb2.ListClubTablesResponse:
        club, _ = await self._member_of(request.club_id)
        tables = await self._open_tables(club.club_id)
        return K.ListClubTablesResponse(tables=[self._table(table) for table in tables])

    async def ClubQuickMatch(self, request: clubs_pb2.ClubQuickMatchRequest,
                             context: grpc.aio.ServicerContext) -> clubs_pb2.ClubQuickMatchResponse:
        club, member = await self._member_of(request.club_id)
        me = member.player_id
        tables = await self._open_tables(club.club_id)
        if request.table_id:
            chosen = [t for t in tables if t.table_id == check_table_id(request.table_id)]
            if not chosen:
                raise not_found("table of this club")
        else:
            game = game_named(request.game)
            chosen = [t for t in reversed(tables) if t.game == game and len(t.seats) == request.seats
                      and t.status == Status.WAITING and t.has_open_seat and t.seat_of(me) is None]
            if not chosen:
                reply = await self.CreateClubTable(K.CreateClubTableRequest(
                    club_id=club.club_id, game=request.game, seats=request.seats), context)
                return K.ClubQuickMatchResponse(table=reply.table, seat=0)
        await self.lobby.repo.change(chosen[0].table_id, lambda t: t.admit(me))
        table, seat = await self.lobby.join(caller(), chosen[0].table_id, None, False)
        return K.ClubQuickMatchResponse(table=self._table(table), seat=seat)

    async def GetClubLeaderboard(self, request: clubs_pb2.GetClubLeaderboardRequest,
                                 context: grpc.aio.ServicerContext) -> clubs_pb2.GetClubLeaderboardResponse:
        club, _ = await self._member_of(request.club_id)
        game = game_named(request.game)
        if not 0 <= request.season <= club.season:
            raise invalid(f"season must be 0 (the current one) to {club.season}")
        season = request.season or club.season
        standings = await self.ratings.standings(club.club_id, season, game)
        order = sorted(standings, key=lambda p: (-standings[p].rating.conservative(), -standings[p].wins, p))
        names = await self.names.names(order)
        return K.GetClubLeaderboardResponse(season=season, lines=[
            K.ClubRatingLine(rank=rank, player_id=player, name=name,
                             rating=standings[player].rating.conservative(),
                             games=standings[player].games, wins=standings[player].wins)
            for rank, (player, name) in enumerate(zip(order, names, strict=True), start=1)])

    # Invitations

    async def InviteToTable(self, request: clubs_pb2.InviteToTableRequest,
                            context: grpc.aio.ServicerContext) -> clubs_pb2.InviteToTableResponse:
        me, other = await self._other(request.player_id)
        hold = request.hold_seconds or DEFAULT_HOLD_SECONDS
        if not MIN_HOLD_SECONDS <= hold <= MAX_HOLD_SECONDS:
            raise invalid(f"hold_seconds must be 0 (a day) or {MIN_HOLD_SECONDS} to {MAX_HOLD_SECONDS}")
        table = await self.lobby.get(check_table_id(request.table_id))
        if table.seat_of(me) is None:
            raise precondition("invite to a table you sit at")
        if await self.friends.blocked_by(me, other):
            raise denied("this player does not accept invitations from you")
        shared_club = set(await self.clubs.of_player(me)) & set(await self.clubs.of_player(other))
        if not await self.friends.are_friends(me, other) and not shared_club:
            raise denied("invite friends or members of your clubs")
        await self.limits.check("invite", me)

        def invite(table: LobbyTable) -> int:
            table.admit(other)
            return table.hold(other, time.time() + hold) if request.hold_seat else -1
        table, seat = await self.lobby.repo.change(table.table_id, invite)
        await self.inbox.add(other, K.NOTIFICATION_KIND_TABLE_INVITATION,
                             f"{caller().name} invites you to a table of {table.game}",
                             collapse_key=f"invite:{table.table_id}", from_player_id=me,
                             table_id=table.table_id, code=table.code)
        return K.InviteToTableResponse(seat=seat)

    async def AnswerTableInvitation(
            self, request: clubs_pb2.AnswerTableInvitationRequest,
            context: grpc.aio.ServicerContext) -> clubs_pb2.AnswerTableInvitationResponse:
        me = caller().player_id
        table = await self.lobby.get(check_table_id(request.table_id))
        if me not in table.guests:
            raise not_found("invitation to this table")
        if not request.accept:
            await self.lobby.repo.change(table.table_id, lambda t: t.release(me, uninvite=True))
            return K.AnswerTableInvitationResponse(seat=-1)
        _, seat = await self.lobby.join(caller(), table.table_id, None, False)
        return K.AnswerTableInvitationResponse(seat=seat)

    async def JoinTableByCode(self, request: clubs_pb2.JoinTableByCodeRequest,
                              context: grpc.aio.ServicerContext) -> clubs_pb2.JoinTableByCodeResponse:
        me = caller().player_id
        await self.limits.check("code", me)
        table = await self.lobby.get(await self.lobby.codes.table_of(request.code))
        wish = table.check_seat_number(request.seat) if request.HasField("seat") else None
        hosts = {seat.player_id for seat in table.seats if seat.person} | set(table.guests[:1])
        for host in hosts - {me}:
            if await self.friends.blocked_by(me, host):
                raise denied("a player at this table does not accept you")
        await self.lobby.repo.change(table.table_id, lambda t: t.admit(me))
        _, seat = await self.lobby.join(caller(), table.table_id, wish, False)
        return K.JoinTableByCodeResponse(table_id=table.table_id, seat=seat)

    async def ListWaitingGames(self, request: clubs_pb2.ListWaitingGamesRequest,
                               context: grpc.aio.ServicerContext) -> clubs_pb2.ListWaitingGamesResponse:
        replies = []
        for table_id, game, deadline in await self.turns.waiting(caller().player_id):
            reply = K.WaitingGame(table_id=table_id, game=game)
            _ts(reply, "deadline", deadline)
            replies.append(reply)
        return K.ListWaitingGamesResponse(games=replies)

    # Inbox

    async def ListInbox(self, request: clubs_pb2.ListInboxRequest,
                        context: grpc.aio.ServicerContext) -> clubs_pb2.ListInboxResponse:
        me = caller().player_id
        size = page_size(request.page_size)
        before = None
        if request.page_token:
            try:
                before = float(request.page_token)
            except ValueError as exc:
                raise invalid("page_token is not one this call gave") from exc
            if not math.isfinite(before):
                raise invalid("page_token is not one this call gave")
        notes, more = await self.inbox.page(me, size, before, request.unread_only)
        return K.ListInboxResponse(notifications=[note_proto(note, read) for note, read in notes],
                                   unread_count=await self.inbox.unread_count(me),
                                   next_page_token=repr(more) if more is not None else "")

    async def MarkRead(self, request: clubs_pb2.MarkReadRequest,
                       context: grpc.aio.ServicerContext) -> clubs_pb2.MarkReadResponse:
        if len(request.notification_ids) > MAX_PAGE:
            raise invalid(f"at most {MAX_PAGE} notification_ids")
        for notification_id in request.notification_ids:
            if len(notification_id) != 32 or not notification_id.isalnum():
                raise invalid("notification_ids must be ids the inbox gave")
        count = await self.inbox.mark_read(caller().player_id, list(request.notification_ids), request.all)
        return K.MarkReadResponse(unread_count=count)

    async def WatchInbox(self, request: clubs_pb2.WatchInboxRequest,
                         context: grpc.aio.ServicerContext) -> AsyncIterator[clubs_pb2.WatchInboxResponse]:
        me = caller().player_id
        stream_id = uuid.uuid4().hex
        news: asyncio.Queue[bytes] = asyncio.Queue(maxsize=1000)

        async def arrived(msg: object) -> None:
            if not news.full():
                news.put_nowait(msg.data)  # type: ignore[attr-defined]

        subscription = await self.inbox.keys.runtime.nats.subscribe(self.inbox.subject(me), cb=arrived)
        OPEN_STREAMS.labels(service="clubs").inc()
        try:
            await self.friends.stream_open(me, stream_id)
            yield K.WatchInboxResponse(unread_count=await self.inbox.unread_count(me))
            while True:
                try:
                    raw = await asyncio.wait_for(news.get(), PRESENCE_TTL / 3)
                except TimeoutError:
                    await self.friends.stream_open(me, stream_id)
                    continue
                note = Note(**orjson.loads(raw))
                yield K.WatchInboxResponse(notification=note_proto(note, False),
                                           unread_count=await self.inbox.unread_count(me))
        finally:
            OPEN_STREAMS.labels(service="clubs").dec()
            await subscription.unsubscribe()
            await self.friends.stream_closed(me, stream_id)

    async def RegisterPushToken(self, request: clubs_pb2.RegisterPushTokenRequest,
                                context: grpc.aio.ServicerContext) -> clubs_pb2.RegisterPushTokenResponse:
        platforms = {K.PUSH_PLATFORM_APNS: "apns", K.PUSH_PLATFORM_FCM: "fcm"}
        if request.platform not in platforms:
            raise invalid("platform must be APNS or FCM")
        if not 8 <= len(request.token) <= 512 or not request.token.isprintable() or " " in request.token:
            raise invalid("token must be 8 to 512 printable characters without spaces")
        if not 1 <= len(request.app_id) <= 100 or not request.app_id.isprintable() or " " in request.app_id:
            raise invalid("app_id must be 1 to 100 printable characters without spaces")
        await self.devices.register(caller().player_id, platforms[request.platform], request.token,
                                    request.app_id)
        return K.RegisterPushTokenResponse()

    async def UnregisterPushToken(self, request: clubs_pb2.UnregisterPushTokenRequest,
                                  context: grpc.aio.ServicerContext) -> clubs_pb2.UnregisterPushTokenResponse:
        if not 0 < len(request.token) <= 512:
            raise invalid("token must be 1 to 512 characters")
        await self.devices.unregister(caller().player_id, request.token)
        return K.UnregisterPushTokenResponse()

    async def GetNotificationPreferences(
            self, request: clubs_pb2.GetNotificationPreferencesRequest,
            context: grpc.aio.ServicerContext) -> clubs_pb2.GetNotificationPreferencesResponse:
        prefs = await self.devices.preferences(caller().player_id)
        return K.GetNotificationPreferencesResponse(preferences=K.NotificationPreferences(
            muted_kinds=[K.NotificationKind.Value("NOTIFICATION_KIND_" + kind) for kind in prefs.muted],
            quiet_start_minute=prefs.quiet_start, quiet_end_minute=prefs.quiet_end,
            time_zone=prefs.time_zone))

    async def SetNotificationPreferences(
            self, request: clubs_pb2.SetNotificationPreferencesRequest,
            context: grpc.aio.ServicerContext) -> clubs_pb2.SetNotificationPreferencesResponse:
        wanted = request.preferences
        kinds = set(K.NotificationKind.values()) - {K.NOTIFICATION_KIND_UNSPECIFIED}
        if any(kind not in kinds for kind in wanted.muted_kinds):
            raise invalid("muted_kinds must be NotificationKind values")
        for minute in (wanted.quiet_start_minute, wanted.quiet_end_minute):
            if not 0 <= minute < 24 * 60:
                raise invalid("quiet hours are minutes after midnight, 0 to 1439")
        muted = tuple(sorted({K.NotificationKind.Name(kind).removeprefix("NOTIFICATION_KIND_")
                              for kind in wanted.muted_kinds}))
        await self.devices.set_preferences(caller().player_id, Preferences(
            muted, wanted.quiet_start_minute, wanted.quiet_end_minute, check_zone(wanted.time_zone)))
        return K.SetNotificationPreferencesResponse()

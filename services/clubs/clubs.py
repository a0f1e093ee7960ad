"""Clubs (Stammtische) in Redis: the document, members with roles, bans, invitations, the code.

A club's keys share the tag ``{c<id>}`` so its multi-key changes are one transaction; each
member also lists its clubs under its own keys. The join code (of the same shape as a private
table's, services/lobby/private.py) is a global index (code -> club).
"""

from __future__ import annotations

import re
import time
import uuid
from dataclasses import asdict, dataclass

import orjson

from services.clubs.keys import Keys
from services.lobby.private import new_code, normal_code
from shared.errors import BadInput, NotFound, Refused

_CLUB_ID = re.compile(r"[0-9a-f]{32}")
MEMBER, ADMIN, OWNER = 1, 2, 3
PUBLIC, INVITATION = 1, 2
MAX_MEMBERS = 500
MAX_CLUBS_PER_PLAYER = 50


@dataclass
class Club:
    """A club's document."""

    club_id: str
    name: str
    description: str
    join_policy: int
    code: str
    owner_id: str
    created_at: float
    time_zone: str
    #: The current season of the club's evenings.
    season: int = 1


@dataclass
class Member:
    """A member's place in a club."""

    player_id: str
    role: int
    joined_at: float
    muted_until: float = 0.0


def check_club_id(club_id: str) -> str:
    """A club id of the shape the service makes (32 hex digits), else BadInput."""
    if not _CLUB_ID.fullmatch(club_id):
        raise BadInput("club_id must be 32 lowercase hex digits")
    return club_id


class Clubs:
    """Reads and changes clubs."""

    def __init__(self, keys: Keys) -> None:
        self.keys = keys
        self.redis = keys.runtime.redis

    async def create(self, owner_id: str, name: str, description: str, join_policy: int,
                     time_zone: str) -> Club:
        """A new club with the owner as its only member and a fresh unique code."""
        if len(await self.of_player(owner_id)) >= MAX_CLUBS_PER_PLAYER:
            raise Refused(f"a player belongs to at most {MAX_CLUBS_PER_PLAYER} clubs")
        club = Club(uuid.uuid4().hex, name, description, join_policy, "", owner_id, time.time(), time_zone)
        while not club.code:
            code = new_code()
            if await self.redis.set(self.keys.global_("code", code), club.club_id, nx=True):
                club.code = code
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.set(self.keys.club(club.club_id, "doc"), orjson.dumps(asdict(club)))
            pipe.hset(self.keys.club(club.club_id, "members"), owner_id,
                      orjson.dumps(asdict(Member(owner_id, OWNER, club.created_at))))
            await pipe.execute()
        await self.redis.sadd(self.keys.player(owner_id, "clubs"), club.club_id)
        return club

    async def get(self, club_id: str) -> Club:
        """The club, else NotFound."""
        doc = await self.redis.get(self.keys.club(check_club_id(club_id), "doc"))
        if doc is None:
            raise NotFound("club")
        return Club(**orjson.loads(doc))

    async def by_code(self, code: str) -> Club:
        """The club of a join code, else NotFound."""
        club_id = await self.redis.get(self.keys.global_("code", normal_code(code)))
        if club_id is None:
            raise NotFound("a club with this code")
        return await self.get(club_id.decode())

    async def save(self, club: Club) -> None:
        """Write the document back."""
        await self.redis.set(self.keys.club(club.club_id, "doc"), orjson.dumps(asdict(club)))

    async def member(self, club_id: str, player_id: str) -> Member | None:
        """The player's membership, if any."""
        doc = await self.redis.hget(self.keys.club(club_id, "members"), player_id)
        return Member(**orjson.loads(doc)) if doc else None

    async def members(self, club_id: str) -> list[Member]:
        """Every member, by join time."""
        docs = await self.redis.hvals(self.keys.club(club_id, "members"))
        return sorted((Member(**orjson.loads(doc)) for doc in docs), key=lambda m: (m.joined_at, m.player_id))

    async def member_count(self, club_id: str) -> int:
        """How many members the club has."""
        return int(await self.redis.hlen(self.keys.club(club_id, "members")))

    async def put_member(self, club_id: str, member: Member) -> None:
        """Add or update a membership (and the player's list of clubs)."""
        await self.redis.hset(self.keys.club(club_id, "members"), member.player_id,
                              orjson.dumps(asdict(member)))
        await self.redis.sadd(self.keys.player(member.player_id, "clubs"), club_id)

    async def add_member(self, club_id: str, player_id: str) -> None:
        """A new member (role member); Refused when full or when the player is in too many clubs."""
        if await self.member_count(club_id) >= MAX_MEMBERS:
            raise Refused(f"the club is full ({MAX_MEMBERS} members)")
        if len(await self.of_player(player_id)) >= MAX_CLUBS_PER_PLAYER:
            raise Refused(f"a player belongs to at most {MAX_CLUBS_PER_PLAYER} clubs")
        await self.put_member(club_id, Member(player_id, MEMBER, time.time()))
        await self.redis.srem(self.keys.club(club_id, "invited"), player_id)

    async def remove_member(self, club_id: str, player_id: str, ban: bool = False) -> None:
        """Remove a membership (and ban the player if asked)."""
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hdel(self.keys.club(club_id, "members"), player_id)
            if ban:
                pipe.sadd(self.keys.club(club_id, "bans"), player_id)
            await pipe.execute()
        await self.redis.srem(self.keys.player(player_id, "clubs"), club_id)

    async def is_banned(self, club_id: str, player_id: str) -> bool:
        """Whether the player is banned from the club."""
        return bool(await self.redis.sismember(self.keys.club(club_id, "bans"), player_id))

    async def unban(self, club_id: str, player_id: str) -> None:
        """Lift a ban (idempotent)."""
        await self.redis.srem(self.keys.club(club_id, "bans"), player_id)

    async def invite(self, club_id: str, player_id: str) -> None:
        """Remember an invitation (it lets the player join by the club's id)."""
        await self.redis.sadd(self.keys.club(club_id, "invited"), player_id)

    async def is_invited(self, club_id: str, player_id: str) -> bool:
        """Whether the player was invited."""
        return bool(await self.redis.sismember(self.keys.club(club_id, "invited"), player_id))

    async def of_player(self, player_id: str) -> list[str]:
        """The ids of the player's clubs."""
        return sorted(raw.decode() for raw in await self.redis.smembers(self.keys.player(player_id, "clubs")))

    async def season_of(self, club_id: str) -> int:
        """The club's current season; 0 for a club that is gone."""
        try:
            return (await self.get(club_id)).season
        except NotFound:
            return 0

    async def add_table(self, club_id: str, table_id: str, at: float) -> None:
        """List a members-only table of the club."""
        await self.redis.zadd(self.keys.club(club_id, "tables"), {table_id: at})

    async def tables(self, club_id: str) -> list[str]:
        """The club's tables, newest first (closed ones included until dropped)."""
        return [raw.decode() for raw in await self.redis.zrevrange(self.keys.club(club_id, "tables"), 0, 199)]

    async def drop_table(self, club_id: str, table_id: str) -> None:
        """Forget a closed table."""
        await self.redis.zrem(self.keys.club(club_id, "tables"), table_id)

    async def delete(self, club: Club) -> None:
        """Delete the club: its keys, its code and every member's entry."""
        members = await self.members(club.club_id)
        await self.redis.delete(*(self.keys.club(club.club_id, what)
                                  for what in ("doc", "members", "bans", "invited", "chat", "chat-seq",
                                               "tables")))
        await self.redis.delete(self.keys.global_("code", club.code))
        for member in members:
            await self.redis.srem(self.keys.player(member.player_id, "clubs"), club.club_id)

"""The club evening: a weekly time in the club's time zone that opens a series tournament of
the tournament service (its own model and store, as its servicer makes one) with the members
who checked in; and the seasons' standings over those evenings.

Each replica looks for due evenings every second; an evening opens once (a Redis key per
club and occurrence, SET NX), and "starts in 15 minutes" is sent once the same way. A season's
standing is recomputed from its evenings' tournament standings whenever it is asked for; a
closed season's final table is kept as it was.
"""

from __future__ import annotations

import math
import secrets
import time
import uuid
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from fractions import Fraction
from typing import Any
from zoneinfo import ZoneInfo

import orjson

from services.clubs.clubs import Club, Clubs
from services.clubs.inbox import Inbox
from services.clubs.keys import Keys
from services.clubs.ratings import ClubRatings
from services.clubs.tournament_news import TournamentNews
from services.lobby.catalog import MAX_TURN_SECONDS
from services.lobby.players import PlayerNames
from services.tournament import convert
from services.tournament.model import Status, Tournament
from services.tournament.store import TournamentStore
from shared.api.stammtisch.v1 import clubs_pb2, common_pb2, tournament_pb2
from shared.errors import BadInput
from shared.games.catalog import entry
from shared.infra.tasks import poll_forever
from shared.obs.logs import get_logger
from shared.rpc.catalog import game_named

log = get_logger("clubs.evenings")

MAX_ROUNDS = 10
WEEK = timedelta(days=7)


@dataclass(frozen=True)
class Evening:
    """A club's weekly evening."""

    weekday: int
    minute: int
    game: str
    table_size: int
    rounds: int
    games_per_round: int
    turn_seconds: int

    def next_at(self, zone: str, now: float) -> float:
        """The unix time of the next evening at or after ``now``."""
        local = datetime.fromtimestamp(now, ZoneInfo(zone or "UTC"))
        day = local.replace(hour=self.minute // 60, minute=self.minute % 60, second=0, microsecond=0)
        day += timedelta(days=(self.weekday - 1 - local.weekday()) % 7)
        if day.timestamp() < now:
            day += WEEK
        return day.timestamp()


def evening_of(message: clubs_pb2.ClubEvening) -> Evening:
    """A checked evening (the tournament's own checks follow when it opens), else BadInput."""
    if not 1 <= message.weekday <= 7:
        raise BadInput("weekday must be 1 (Monday) to 7 (Sunday)")
    if not 0 <= message.minute < 24 * 60:
        raise BadInput("minute must be 0 to 1439 (minutes after midnight)")
    game = game_named(message.game)
    size = message.table_size or entry(game).default_seats
    if not entry(game).min_seats <= size <= entry(game).max_seats:
        raise BadInput(f"table_size must be {entry(game).min_seats} to {entry(game).max_seats}")
    for name, value in (("rounds", message.rounds), ("games_per_round", message.games_per_round)):
        if not 0 <= value <= MAX_ROUNDS:
            raise BadInput(f"{name} must be 0 (one) to {MAX_ROUNDS}")
    if not 0 <= message.turn_seconds <= MAX_TURN_SECONDS:
        raise BadInput(f"turn_seconds must be 0 (the server's default) to {MAX_TURN_SECONDS}")
    return Evening(message.weekday, message.minute, game, size, message.rounds or 1,
                   message.games_per_round or 1, message.turn_seconds)


class ClubEvenings:
    """Schedules, opens and scores club evenings."""

    def __init__(self, keys: Keys, clubs: Clubs, inbox: Inbox, news: TournamentNews, names: PlayerNames,
                 ratings: ClubRatings, tournaments: TournamentStore, default_turn: float,
                 notice_seconds: float = 900.0) -> None:
        self.keys = keys
        self.news = news
        self.ratings = ratings
        self.redis = keys.runtime.redis
        self.clubs = clubs
        self.inbox = inbox
        self.names = names
        self.tournaments = tournaments
        self.default_turn = default_turn
        self.notice_seconds = notice_seconds

    # -- the schedule -----------------------------------------------------------------------

    async def get(self, club_id: str) -> Evening | None:
        """The club's evening, if it has one."""
        doc = await self.redis.get(self.keys.club(club_id, "evening"))
        return Evening(**orjson.loads(doc)) if doc else None

    async def set(self, club: Club, evening: Evening) -> float:
        """Set the club's evening; returns when the next one opens."""
        next_at = evening.next_at(club.time_zone, time.time())
        await self.redis.set(self.keys.club(club.club_id, "evening"), orjson.dumps(asdict(evening)))
        await self.redis.zadd(self.keys.global_("evenings"), {club.club_id: next_at})
        return next_at

    async def next_at(self, club: Club) -> float:
        """When the next evening of the club opens (0: none set)."""
        score = await self.redis.zscore(self.keys.global_("evenings"), club.club_id)
        return float(score or 0.0)

    def _checkin_key(self, club_id: str, at: float) -> str:
        return self.keys.club(club_id, f"checkin-{int(at)}")

    async def check_in(self, club: Club, player_id: str) -> int:
        """Check the member in for the next evening; how many are checked in."""
        at = await self.next_at(club)
        if not at:
            raise BadInput("the club has no evening; an admin sets one first")
        key = self._checkin_key(club.club_id, at)
        await self.redis.sadd(key, player_id)
        await self.redis.expire(key, int(WEEK.total_seconds()) * 2)
        return int(await self.redis.scard(key))

    async def checked_in(self, club: Club) -> int:
        """How many members are checked in for the next evening."""
        at = await self.next_at(club)
        return int(await self.redis.scard(self._checkin_key(club.club_id, at))) if at else 0

    # -- opening ----------------------------------------------------------------------------

    async def run_forever(self, interval: float = 1.0) -> None:
        """Open due evenings and send their notices until cancelled."""
        await poll_forever(self.run_once, interval, log, "club_evenings_failed")

    async def run_once(self) -> int:
        """Send due notices and open due evenings; how many were handled."""
        now = time.time()
        handled = 0
        index = self.keys.global_("evenings")
        for raw, at in await self.redis.zrangebyscore(index, "-inf", now + self.notice_seconds,
                                                      withscores=True):
            club_id = raw.decode()
            if await self.redis.set(self.keys.club(club_id, f"noticed-{int(at)}"), 1, nx=True,
                                    ex=int(WEEK.total_seconds())):
                await self._notice(club_id, at)
                handled += 1
            opened = self.keys.club(club_id, f"opened-{int(at)}")
            if at <= now and await self.redis.set(opened, 1, nx=True, ex=int(WEEK.total_seconds())):
                await self._open(club_id, at)
                handled += 1
        return handled + await self.tell_seatings()

    async def tell_seatings(self) -> int:
        """Each player seated in a round of an evening's tournament gets TOURNAMENT_SEATED once
        (its table and seat; the tournament news's once-key, so the history makes up for news
        missed while no replica listened); a finished tournament is no longer followed. How many
        were told."""
        index = self.keys.global_("evening-tournaments")
        told = 0
        for raw_id, raw_seen in (await self.redis.hgetall(index)).items():
            tournament_id, seen = raw_id.decode(), int(raw_seen)
            entries = await self.tournaments.history(tournament_id, seen)
            tournament = await self.tournaments.get(tournament_id)
            for seq, change in entries:
                if change["change"] == "seated":
                    told += await self._seated(tournament, int(change["round"]))
                seen = seq
            if tournament.status in (Status.FINISHED, Status.CANCELLED) and not entries:
                await self.redis.hdel(index, tournament_id)
            else:
                await self.redis.hset(index, tournament_id, seen)
        return told

    async def _seated(self, tournament: Tournament, round_no: int) -> int:
        told = 0
        for entrant in tournament.players:
            seat = tournament.seat_of(entrant.player_id, round_no)
            if seat is None or entrant.bot:
                continue
            told += await self.news.seated(entrant.player_id, tournament.tournament_id,
                                           tournament.settings.name, round_no, seat[0], seat[1],
                                           tournament.table_id(round_no, seat[0]))
        return told

    async def _notice(self, club_id: str, at: float) -> None:
        try:
            club = await self.clubs.get(club_id)
        except Exception:  # noqa: BLE001 (deleted meanwhile)
            return
        minutes = max(0, math.ceil((at - time.time()) / 60))
        for member in await self.clubs.members(club_id):
            await self.inbox.add(member.player_id, clubs_pb2.NOTIFICATION_KIND_CLUB_EVENING,
                                 f"The evening of {club.name} starts in {minutes} minutes: check in",
                                 collapse_key=f"evening:{club_id}", club_id=club_id)

    async def _open(self, club_id: str, at: float) -> None:
        """Open the evening's tournament with the checked-in members; schedule the next one."""
        try:
            club = await self.clubs.get(club_id)
        except Exception:  # noqa: BLE001 (deleted meanwhile)
            await self.redis.zrem(self.keys.global_("evenings"), club_id)
            return
        evening = await self.get(club_id)
        if evening is None:
            await self.redis.zrem(self.keys.global_("evenings"), club_id)
            return
        following = evening.next_at(club.time_zone, at + 60)
        await self.redis.zadd(self.keys.global_("evenings"), {club_id: following})
        members = {m.player_id for m in await self.clubs.members(club_id)}
        players = sorted(raw.decode() for raw in await self.redis.smembers(self._checkin_key(club_id, at))
                         if raw.decode() in members)
        if len(players) < entry(evening.game).min_seats:
            log.info("club_evening_too_few", club_id=club_id, checked_in=len(players))
            return
        tournament = self._tournament(club, evening, at, len(players))
        for player_id, name in zip(players, await self.names.names(players), strict=True):
            tournament.register(player_id, name, 0.0)
        tournament.start(time.time())
        await self.ratings.own_tournament(club_id, tournament.tournament_id)
        await self.tournaments.add(tournament)
        await self.redis.rpush(self.keys.club(club_id, f"season-{club.season}"), tournament.tournament_id)
        await self.redis.hset(self.keys.global_("evening-tournaments"), tournament.tournament_id, 0)
        log.info("club_evening_opened", club_id=club_id, tournament_id=tournament.tournament_id,
                 players=len(players))

    def _tournament(self, club: Club, evening: Evening, at: float, players: int) -> Tournament:
        options = common_pb2.TableOptions(turn_seconds=evening.turn_seconds or None)
        local = datetime.fromtimestamp(at, ZoneInfo(club.time_zone or "UTC"))
        request = tournament_pb2.TournamentSettings(
            name=f"{club.name[:30]} {local:%d.%m.}", game=evening.game,
            format=tournament_pb2.TOURNAMENT_FORMAT_SERIES, capacity=max(players, 2),
            rounds=evening.rounds, games_per_round=evening.games_per_round,
            table_size=evening.table_size, options=options)
        settings = convert.settings_of(request, self.default_turn)
        return Tournament(uuid.uuid4().hex, club.owner_id, settings, time.time(),
                          deal_secret=secrets.token_hex(16))

    # -- seasons ------------------------------------------------------------------------------

    async def season_ids(self, club_id: str, season: int) -> list[str]:
        """The tournaments of a season's evenings, oldest first."""
        found = await self.redis.lrange(self.keys.club(club_id, f"season-{season}"), 0, -1)
        return [raw.decode() for raw in found]

    async def standing(self, club_id: str, season: int) -> list[dict[str, Any]]:
        """The season's lines (best first): a closed season's kept table, else recomputed."""
        kept = await self.redis.get(self.keys.club(club_id, f"season-final-{season}"))
        if kept is not None:
            return list(orjson.loads(kept))
        points: dict[str, Fraction] = {}
        evenings: dict[str, int] = {}
        wins: dict[str, int] = {}
        for tournament_id in await self.season_ids(club_id, season):
            tournament = await self.tournaments.get(tournament_id)
            recorded = [result for result, _extra in await self.tournaments.results(tournament_id)]
            if not recorded:
                continue
            lines = convert.standings_of(tournament, recorded)
            for rank, line in enumerate(lines, start=1):
                points[line.player_id] = points.get(line.player_id, Fraction(0)) + len(lines) - rank + 1
                evenings[line.player_id] = evenings.get(line.player_id, 0) + 1
                wins[line.player_id] = wins.get(line.player_id, 0) + (rank == 1)
        order = sorted(points, key=lambda p: (-points[p], -wins[p], p))
        names = await self.names.names(order)
        return [{"rank": rank, "player_id": player_id, "name": name, "points": float(points[player_id]),
                 "evenings": evenings[player_id], "wins": wins[player_id]}
                for rank, (player_id, name) in enumerate(zip(order, names, strict=True), start=1)]

    async def close_season(self, club: Club) -> int:
        """Keep the season's final table and begin the next; returns its number."""
        final = await self.standing(club.club_id, club.season)
        await self.redis.set(self.keys.club(club.club_id, f"season-final-{club.season}"), orjson.dumps(final))
        club.season += 1
        await self.clubs.save(club)
        return club.season

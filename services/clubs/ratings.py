"""Club leaderboards: Weng-Lin ratings (scoring's own rate()) of the games finished at a club's
tables and its evenings' tournaments, per club, season and game.

The clubs replicas share one durable JetStream consumer of game results; a result counts once
(its id is kept in the club's slot by the same transaction that writes the ratings) and is
acknowledged only after. Ratings are updated optimistically (WATCH/MULTI, retried on a conflict),
so two results of one club rated at once by two replicas both count. A season starts each player
from the rating the last season ended with.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass

import orjson
from nats.aio.msg import Msg
from redis.asyncio import Redis
from redis.asyncio.client import Pipeline
from redis.exceptions import WatchError

from services.clubs.keys import Keys
from services.scoring.finished import BadResult, FinishedGame
from services.scoring.ratings import Rating, rate
from shared.infra.result_group import GameResultGroup
from shared.obs.logs import get_logger

log = get_logger("clubs.ratings")

DURABLE = "clubs-games"
ACK_WAIT_SECONDS = 10.0


@dataclass
class ClubRating:
    """A member's standing in one game of a club's season."""

    mu: float
    sigma: float
    games: int = 0
    wins: int = 0

    @property
    def rating(self) -> Rating:
        """As scoring rates it."""
        return Rating(self.mu, self.sigma)


class ClubRatings:
    """Which tables and tournaments belong to which club, and the ratings of their games."""

    def __init__(self, keys: Keys) -> None:
        self.keys = keys
        self.redis = keys.runtime.redis

    async def own_table(self, club_id: str, table_id: str) -> None:
        """Count the table's games for the club."""
        await self.redis.hset(self.keys.global_("table-club"), table_id, club_id)

    async def own_tournament(self, club_id: str, tournament_id: str) -> None:
        """Count the tournament's games (its tables are ``<tournament>-r<n>-t<k>``) for the club."""
        await self.redis.hset(self.keys.global_("tournament-club"), tournament_id, club_id)

    async def club_of(self, table_id: str) -> str | None:
        """The club whose game the table's result is, if any."""
        found = await self.redis.hget(self.keys.global_("table-club"), table_id)
        if found is None and "-r" in table_id:
            found = await self.redis.hget(self.keys.global_("tournament-club"), table_id.partition("-r")[0])
        return found.decode() if found else None

    def _key(self, club_id: str, season: int, game: str) -> str:
        return self.keys.club(club_id, f"ratings-{season}-{game}")

    async def standings(self, club_id: str, season: int, game: str,
                        reader: Redis | Pipeline | None = None) -> dict[str, ClubRating]:
        """Every rated member of the season's game (read through ``reader``, a watching pipeline)."""
        raw = await (reader or self.redis).hgetall(self._key(club_id, season, game))
        return {player.decode(): ClubRating(**orjson.loads(doc)) for player, doc in raw.items()}

    async def _start(self, club_id: str, season: int, game: str, players: list[str],
                     watching: Pipeline) -> list[ClubRating]:
        now = await self.standings(club_id, season, game, watching)
        before = await self.standings(club_id, season - 1, game) if season > 1 else {}
        fresh = Rating()
        start = []
        for player in players:
            if player in now:
                start.append(now[player])
            elif player in before:
                start.append(ClubRating(before[player].mu, before[player].sigma))
            else:
                start.append(ClubRating(fresh.mu, fresh.sigma))
        return start

    async def record(self, club_id: str, season: int, game: FinishedGame) -> bool:
        """Rate one finished game of the club; False when it was counted before. Optimistic: the
        ratings are read under WATCH and written in MULTI, so two results of one club rated at the
        same moment (two replicas) are both counted, the later one again from the newer ratings."""
        seats = game.people()
        players = [game.player_ids[seat] for seat in seats]
        if len(set(players)) < 2:
            return False
        key, rated_ids = self._key(club_id, season, game.game), self.keys.club(club_id, "rated-results")
        async with self.redis.pipeline(transaction=True) as pipe:
            while True:
                try:
                    await pipe.watch(key, rated_ids)
                    if await pipe.sismember(rated_ids, game.result_id):
                        return False
                    current = await self._start(club_id, season, game.game, players, pipe)
                    after = rate([c.rating for c in current], [game.scores[seat] for seat in seats])
                    pipe.multi()
                    pipe.sadd(rated_ids, game.result_id)
                    for seat, player, before, rated in zip(seats, players, current, after, strict=True):
                        won = int(seat in game.winners)
                        pipe.hset(key, player, orjson.dumps(asdict(ClubRating(
                            rated.mu, rated.sigma, before.games + 1, before.wins + won))))
                    await pipe.execute()
                    return True
                except WatchError:
                    continue


class ClubResults(GameResultGroup):
    """The clubs replicas' share of every game result: rates the games of clubs."""

    def __init__(self, keys: Keys, ratings: ClubRatings, season_of: Callable[[str], Awaitable[int]]) -> None:
        super().__init__(keys.runtime, DURABLE, ACK_WAIT_SECONDS, self.handle)
        self.ratings = ratings
        self.season_of = season_of

    async def handle(self, msg: Msg) -> None:
        """Rate the game if a club's, then acknowledge; a malformed result is dropped."""
        result_id = (msg.headers or {}).get("Nats-Msg-Id", "")
        try:
            game = FinishedGame.from_message(result_id, msg.data)
        except BadResult:
            await msg.ack()
            return
        try:
            club_id = await self.ratings.club_of(game.table_id)
            if club_id is not None:
                season = await self.season_of(club_id)
                if season:
                    await self.ratings.record(club_id, season, game)
        except Exception:
            log.exception("club_result_failed", table_id=game.table_id)
            await msg.nak(delay=1.0)
            return
        await msg.ack()

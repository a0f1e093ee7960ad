"""Scoring's Redis data: finished games per table, standings and leaderboards per game.

Keys (one hash tag, so a transaction may span them in Redis Cluster; the
write rate is one small transaction per finished game)::

    <prefix>:scoring:{scoring}:table:<table_id>       hash  result id -> FinishedGame JSON
    <prefix>:scoring:{scoring}:stats:<game>:<player>  hash  games, wins, rating
    <prefix>:scoring:{scoring}:board:<game>           zset  player -> rank key (rating, then wins)

Recording a game is one WATCH/MULTI transaction that checks and writes the
result id together with the standings it changes: a result delivered twice
changes nothing the second time, and two replicas recording games of the same
player at once retry instead of losing an update.
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass
from typing import Any

from redis.exceptions import WatchError

from services.scoring.ratings import START_RATING, rating_changes
from services.scoring.results import FinishedGame
from shared.games.catalog import CATALOGUE
from shared.runtime import Runtime

#: Finished games of a table are kept this long after the table's last one
#: (longer than the results stream keeps messages, so no redelivery outlives its marker).
RESULTS_TTL_MS = 90 * 86_400 * 1000
#: Optimistic attempts before giving up (the message is then delivered again later).
MAX_ATTEMPTS = 20
#: First retry waits up to this long; the wait doubles per attempt up to 64 times it.
BACKOFF_SECONDS = 0.001
#: Wins break rating ties in the board's sort key below this many wins.
_WIN_SLOTS = 1_000_000


@dataclass(frozen=True)
class Standing:
    """One player's record in one game."""

    player_id: str
    games: int = 0
    wins: int = 0
    rating: float = START_RATING

    def rank_key(self) -> int:
        """Sorts by rating (to 1/1000 of a point), then by wins; exact as a Redis score."""
        return round(self.rating * 1000) * _WIN_SLOTS + min(self.wins, _WIN_SLOTS - 1)


class TransactionContention(Exception):
    """Concurrent writers kept changing the same standings; try again later."""


class ScoreStore:
    """Reads and records scoring data of one deployment (one key prefix)."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.redis = runtime.redis

    def _key(self, *parts: str) -> str:
        return self.runtime.key("scoring", "{scoring}", *parts)

    async def record(self, game: FinishedGame) -> bool:
        """Record a finished game once; False when its result id was already recorded."""
        table_key = self._key("table", game.table_id)
        board_key = self._key("board", game.game)
        people = game.people()
        stats_keys = [self._key("stats", game.game, game.player_ids[seat]) for seat in people]
        async with self.redis.pipeline(transaction=True) as pipe:
            for attempt in range(MAX_ATTEMPTS):
                try:
                    await pipe.watch(table_key, *stats_keys)
                    if await pipe.hexists(table_key, game.result_id):
                        return False
                    before = [_standing(game.player_ids[seat], await pipe.hgetall(key))
                              for seat, key in zip(people, stats_keys, strict=True)]
                    after = _after_game(game, people, before)
                    pipe.multi()
                    pipe.hset(table_key, game.result_id, game.to_json())
                    pipe.pexpire(table_key, RESULTS_TTL_MS)
                    for key, standing in zip(stats_keys, after, strict=True):
                        pipe.hset(key, mapping={"games": standing.games, "wins": standing.wins,
                                                "rating": standing.rating})
                        pipe.zadd(board_key, {standing.player_id: standing.rank_key()})
                    await pipe.execute()
                    return True
                except WatchError:
                    # Jittered backoff, so that two replicas updating the same players
                    # do not keep invalidating each other in lockstep.
                    await asyncio.sleep(random.uniform(0, BACKOFF_SECONDS * 2 ** min(attempt, 6)))
        raise TransactionContention(f"standings of {game.result_id} kept changing")

    async def table_results(self, table_id: str) -> list[FinishedGame]:
        """The finished games of a table, oldest first; empty for a table scoring never saw."""
        raw = await self.redis.hvals(self._key("table", table_id))
        return sorted((FinishedGame.from_json(item) for item in raw), key=lambda g: (g.game_no, g.seq))

    async def leaderboard(self, game: str, limit: int) -> list[Standing]:
        """The best ``limit`` players of a game, by rating, then wins."""
        ids = [raw.decode() for raw in await self.redis.zrevrange(self._key("board", game), 0, limit - 1)]
        return await self._standings([(game, player) for player in ids])

    async def player_stats(self, player_id: str) -> list[tuple[str, Standing]]:
        """(game, standing) for every game the player has finished, in the registry's order."""
        games = list(CATALOGUE)
        standings = await self._standings([(game, player_id) for game in games])
        return [(game, s) for game, s in zip(games, standings, strict=True) if s.games]

    async def names(self, player_ids: list[str]) -> dict[str, str]:
        """Display names from the lobby's player records ("" where there is none)."""
        async with self.redis.pipeline(transaction=False) as pipe:
            for player in player_ids:
                pipe.hget(self.runtime.key("player", player), "name")
            raw = await pipe.execute()
        return {player: name.decode() if name else "" for player, name in zip(player_ids, raw, strict=True)}

    async def _standings(self, wanted: list[tuple[str, str]]) -> list[Standing]:
        async with self.redis.pipeline(transaction=False) as pipe:
            for game, player in wanted:
                pipe.hgetall(self._key("stats", game, player))
            raw = await pipe.execute()
        return [_standing(player, fields) for (_game, player), fields in zip(wanted, raw, strict=True)]


def _standing(player_id: str, fields: dict[bytes, Any]) -> Standing:
    if not fields:
        return Standing(player_id)
    return Standing(player_id, int(fields[b"games"]), int(fields[b"wins"]), float(fields[b"rating"]))


def _after_game(game: FinishedGame, people: list[int], before: list[Standing]) -> list[Standing]:
    changes = rating_changes([s.rating for s in before], [game.scores[seat] for seat in people])
    return [Standing(s.player_id, s.games + 1, s.wins + (seat in game.winners), s.rating + change)
            for seat, s, change in zip(people, before, changes, strict=True)]

"""Scoring's Redis data: finished games per table, standings and leaderboards per game.

Keys (one hash tag, so one script may span them in Redis Cluster)::

    <prefix>:scoring:{scoring}:table:<table_id>       hash  result id -> FinishedGame JSON
    <prefix>:scoring:{scoring}:stats:<game>:<player>  hash  games, wins, mu, sigma, v (version)
    <prefix>:scoring:{scoring}:ranking:<game>         zset  player -> rank key (mu - 3 sigma, then wins)

A game is recorded by one Lua compare-and-set (redis-py's asyncio cluster client cannot read inside
WATCH) that fails if its result id is there already or a standing it read has changed (each write
bumps ``v``): a result delivered twice changes nothing, and two replicas rating the same player
retry instead of losing an update. It is acknowledged once a Redis replica holds it
(shared/infra/replicas.py). Elo-era standings (a ``rating`` and no ``mu``; the board
``board:<game>``) are migrated on read: games and wins kept, the model's default rating, written
back with the player's next game or the game's next leaderboard query (``_migrate_board``).
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from services.scoring.finished import FinishedGame
from services.scoring.ratings import Rating, rate
from shared.games.catalog import CATALOGUE
from shared.infra.runtime import Runtime

#: Finished games of a table are kept this long after the table's last one
#: (longer than the results stream keeps messages, so no redelivery outlives its marker).
RESULTS_TTL_MS = 90 * 86_400 * 1000
#: Optimistic attempts before giving up (the message is then delivered again later).
MAX_ATTEMPTS = 20
#: First retry waits up to this long; the wait doubles per attempt up to 64 times it.
BACKOFF_SECONDS = 0.001
#: Wins break rating ties in the board's sort key below this many wins.
_WIN_SLOTS = 1_000_000
#: Players moved from an old Elo board per round trip.
MIGRATION_BATCH = 100
#: The stats field of the Elo era, dropped when a standing is written.
LEGACY_RATING = "rating"

_CHECKED_WRITE = """
-- KEYS: the standings read, then the result hash, then every other key the writes touch
-- ARGV: the standings' versions as read (JSON list), the result id that must be absent ('' = none),
--       the writes (JSON list of commands)
local versions = cjson.decode(ARGV[1])
for i, version in ipairs(versions) do
  if (redis.call('HGET', KEYS[i], 'v') or '0') ~= version then return 0 end
end
if ARGV[2] ~= '' and redis.call('HEXISTS', KEYS[#versions + 1], ARGV[2]) == 1 then return -1 end
for _, command in ipairs(cjson.decode(ARGV[3])) do redis.call(unpack(command)) end
return 1
"""

#: One Redis command of a checked write: name, key, arguments.
Command = list[str]


@dataclass
class _Plan:
    """A checked write: the standings' keys and versions it was computed from, and its commands."""

    read: list[tuple[str, str]]
    commands: list[Command]
    result_key: str = ""
    result_id: str = ""


@dataclass(frozen=True)
class Standing:
    """One player's record in one game."""

    player_id: str
    games: int = 0
    wins: int = 0
    rating: Rating = field(default_factory=Rating)

    def rank_key(self) -> int:
        """Sorts by conservative rating (to 1/1000 of a point), then by wins; exact as a Redis score."""
        return round(self.rating.conservative() * 1000) * _WIN_SLOTS + min(self.wins, _WIN_SLOTS - 1)

    def fields(self) -> dict[str, float]:
        """The stats hash of this standing."""
        return {"games": self.games, "wins": self.wins, "mu": self.rating.mu, "sigma": self.rating.sigma}


class TransactionContention(Exception):
    """Concurrent writers kept changing the same standings; try again later."""


class ScoreStore:
    """Reads and records scoring data of one deployment (one key prefix)."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.redis = runtime.redis
        self._write = self.redis.register_script(_CHECKED_WRITE)

    def _key(self, *parts: str) -> str:
        return self.runtime.key("scoring", "{scoring}", *parts)

    async def record(self, game: FinishedGame) -> bool:
        """Record a finished game once; False when its result id was already recorded.

        Returns once a Redis replica holds the record (where replicas are waited for).
        """
        table_key = self._key("table", game.table_id)
        people = game.people()
        stats_keys = [self._key("stats", game.game, game.player_ids[seat]) for seat in people]

        async def plan() -> _Plan | None:
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.hexists(table_key, game.result_id)
                for key in stats_keys:
                    pipe.hgetall(key)
                done, *stats = await pipe.execute()
            if done:
                return None
            before = [_standing(game.player_ids[seat], fields)
                      for seat, fields in zip(people, stats, strict=True)]
            commands = [["HSET", table_key, game.result_id, game.to_json()],
                        ["PEXPIRE", table_key, str(RESULTS_TTL_MS)]]
            for standing in _after_game(game, people, before):
                commands += self._standing_writes(game.game, standing)
            return _Plan(_versions(stats_keys, stats), commands, table_key, game.result_id)

        recorded = await self._checked(plan, game.result_id)
        await self.runtime.replicas.after(table_key)
        return recorded

    async def table_results(self, table_id: str) -> list[FinishedGame]:
        """The finished games of a table, oldest first; empty for a table scoring never saw."""
        raw = await self.redis.hvals(self._key("table", table_id))
        return sorted((FinishedGame.from_json(item) for item in raw), key=lambda g: (g.game_no, g.seq))

    async def leaderboard(self, game: str, limit: int) -> list[Standing]:
        """The best ``limit`` players of a game, by conservative rating, then wins."""
        await self._migrate_board(game)
        ids = [raw.decode() for raw in await self.redis.zrevrange(self._key("ranking", game), 0, limit - 1)]
        return await self._standings([(game, player) for player in ids])

    async def player_stats(self, player_id: str) -> list[tuple[str, Standing]]:
        """(game, standing) for every game the player has finished, in the registry's order."""
        games = list(CATALOGUE)
        standings = await self._standings([(game, player_id) for game in games])
        return [(game, s) for game, s in zip(games, standings, strict=True) if s.games]

    async def conservative_ratings(self, game: str, player_ids: list[str]) -> dict[str, float]:
        """Player -> ``mu - 3 sigma`` in ``game``, for seeding; the default (0) for a new player.

        ``player_ids`` must be checked ids (they become Redis keys).
        """
        wanted = [(game, player) for player in player_ids]
        return {s.player_id: s.rating.conservative() for s in await self._standings(wanted)}

    async def names(self, player_ids: list[str]) -> dict[str, str]:
        """Display names from the lobby's player records ("" where there is none)."""
        async with self.redis.pipeline(transaction=False) as pipe:
            for player in player_ids:
                pipe.hget(self.runtime.key("player", player), "name")
            raw = await pipe.execute()
        return {player: name.decode() if name else "" for player, name in zip(player_ids, raw, strict=True)}

    async def _standings(self, wanted: list[tuple[str, str]]) -> list[Standing]:
        raw = await self._stats(wanted)
        return [_standing(player, fields) for (_game, player), fields in zip(wanted, raw, strict=True)]

    async def _stats(self, wanted: list[tuple[str, str]]) -> list[dict[bytes, Any]]:
        async with self.redis.pipeline(transaction=False) as pipe:
            for game, player in wanted:
                pipe.hgetall(self._key("stats", game, player))
            return list(await pipe.execute())

    def _standing_writes(self, game: str, standing: Standing) -> list[Command]:
        """The writes of one standing; they bump its version and drop any old Elo form of it."""
        key = self._key("stats", game, standing.player_id)
        fields = [str(part) for pair in standing.fields().items() for part in pair]
        return [["HSET", key, *fields], ["HINCRBY", key, "v", "1"], ["HDEL", key, LEGACY_RATING],
                ["ZADD", self._key("ranking", game), str(standing.rank_key()), standing.player_id],
                ["ZREM", self._key("board", game), standing.player_id]]

    async def _migrate_board(self, game: str) -> None:
        """Move every player of the game's old Elo board (if any is left) onto the ranking."""
        old_board = self._key("board", game)
        while members := await self.redis.zrange(old_board, 0, MIGRATION_BATCH - 1):
            await self._migrate_players(game, [raw.decode() for raw in members])

    async def _migrate_players(self, game: str, player_ids: list[str]) -> None:
        """One checked write for a batch: two round trips, however many players."""
        wanted = [(game, player) for player in player_ids]
        keys = [self._key("stats", game, player) for player in player_ids]

        async def plan() -> _Plan:
            stats = await self._stats(wanted)
            commands = []  # one migrated by its next game already is written unchanged
            for (_game, player), fields in zip(wanted, stats, strict=True):
                commands += self._standing_writes(game, _standing(player, fields))
            return _Plan(_versions(keys, stats), commands)

        await self._checked(plan, f"migration of {len(player_ids)} {game} players")

    async def _checked(self, plan: Callable[[], Awaitable[_Plan | None]], what: str) -> bool:
        """Write what ``plan`` computed unless what it read changed meanwhile (then plan again). False
        when ``plan`` returns None or the script finds the plan's result id recorded already."""
        for attempt in range(MAX_ATTEMPTS):
            planned = await plan()
            if planned is None:
                return False
            read_keys = [key for key, _version in planned.read]
            first = [*read_keys, planned.result_key or read_keys[0]]
            keys = first + sorted({command[1] for command in planned.commands} - set(first))
            done = int(await self._write(keys=keys, args=[
                json.dumps([version for _key, version in planned.read]), planned.result_id,
                json.dumps(planned.commands)]))
            if done:
                return done == 1
            # Jittered backoff, so that two replicas updating the same players
            # do not keep invalidating each other in lockstep.
            await asyncio.sleep(random.uniform(0, BACKOFF_SECONDS * 2 ** min(attempt, 6)))
        raise TransactionContention(f"{what} kept changing")


def _versions(keys: list[str], stats: list[dict[bytes, Any]]) -> list[tuple[str, str]]:
    """(key, version) of standings as read; a standing never written has version 0."""
    return [(key, fields.get(b"v", b"0").decode()) for key, fields in zip(keys, stats, strict=True)]


def _standing(player_id: str, fields: dict[bytes, Any]) -> Standing:
    """A standing from its stats hash; an old Elo hash (no mu) is migrated (see above)."""
    if not fields:
        return Standing(player_id)
    rating = Rating(float(fields[b"mu"]), float(fields[b"sigma"])) if b"mu" in fields else Rating()
    return Standing(player_id, int(fields[b"games"]), int(fields[b"wins"]), rating)


def _after_game(game: FinishedGame, people: list[int], before: list[Standing]) -> list[Standing]:
    after = rate([s.rating for s in before], [game.scores[seat] for seat in people])
    return [Standing(s.player_id, s.games + 1, s.wins + (seat in game.winners), rating)
            for seat, s, rating in zip(people, before, after, strict=True)]

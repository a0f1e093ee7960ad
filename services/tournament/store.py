"""Tournaments in Redis: the document, its history, its results and its director's lease.

Keys of one tournament share the hash tag ``{<id>}`` (one Redis Cluster slot),
so one Lua script can check the version (and, for the director, that it still
holds the lease), write the document and append the history entry at once:

* ``doc``: hash ``v`` (compare-and-set version), ``doc`` (JSON);
* ``history``: a stream of every change, entry ids ``<n>-0`` for n = 1, 2, ...;
* ``results``: hash "round:table:game" -> the game's result, written once by
  the first delivery of its JetStream message (the same script appends its
  ``game_finished`` history entry);
* ``lease``: the director holding the tournament, with an expiry.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import Callable
from typing import Any

from services.tournament.core.standings import GameResult
from services.tournament.model import ACTIVE, Entry, Tournament
from shared.infra.runtime import Runtime
from shared.rpc.errors import ServiceError, not_found, unavailable

#: A finished tournament's keys outlive it by this long.
TTL_MS = 30 * 86_400 * 1000
MAX_ATTEMPTS = 50
#: The first retry of a lost compare-and-set waits up to this long; doubling up to 64 times.
BACKOFF_SECONDS = 0.002
#: Compare-and-set refused because another director holds the lease.
LEASE_LOST = -1

_SAVE = """
-- KEYS: doc, history, lease; ARGV: expected version, document, holder ('' = none), ttl, then
-- the history entries' json (none, one, or a batch of registrations), appended in order
if ARGV[3] ~= '' and redis.call('GET', KEYS[3]) ~= ARGV[3] then return -1 end
local cur = tonumber(redis.call('HGET', KEYS[1], 'v') or '0')
if cur ~= tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], 'v', cur + 1, 'doc', ARGV[2])
if #ARGV > 4 then
  local n = redis.call('XLEN', KEYS[2])
  for i = 5, #ARGV do
    n = n + 1
    redis.call('XADD', KEYS[2], n .. '-0', 'e', ARGV[i])
  end
  redis.call('PEXPIRE', KEYS[2], ARGV[4])
end
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1
"""

_RESULT = """
-- KEYS: results, history; ARGV: field, result json, entry json, ttl
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 0 then return 0 end
local n = redis.call('XLEN', KEYS[2]) + 1
redis.call('XADD', KEYS[2], n .. '-0', 'e', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1
"""

_LEASE = """
-- KEYS: lease; ARGV: holder, ttl_ms. Take a free lease or renew one's own.
local cur = redis.call('GET', KEYS[1])
if cur == false then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
if cur == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
"""

_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


class LeaseLost(Exception):
    """Another director holds the tournament now: this one must stop touching it."""


class TournamentStore:
    """Reads and changes the tournaments of one deployment."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.redis = runtime.redis
        self._save = self.redis.register_script(_SAVE)
        self._result = self.redis.register_script(_RESULT)
        self._lease = self.redis.register_script(_LEASE)
        self._release = self.redis.register_script(_RELEASE)

    def key(self, tournament_id: str, part: str) -> str:
        """A key of one tournament (its hash tag keeps them in one cluster slot)."""
        return self.runtime.key("tourney", "{" + tournament_id + "}", part)

    def index_key(self, which: str) -> str:
        """``all``: every tournament by creation time; ``active``: those a director must move on."""
        return self.runtime.key("tourney", "index", which)

    # -- the document -----------------------------------------------------------------------

    async def add(self, tournament: Tournament) -> Tournament:
        """Store a new tournament with its ``created`` history entry, and list it."""
        if await self._write(tournament, [{"change": "created"}], expected=0, holder="") != 1:
            raise unavailable("tournament id taken; retry")
        tournament.version = 1
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.zadd(self.index_key("all"), {tournament.tournament_id: tournament.created_at})
            pipe.zadd(self.index_key("active"), {tournament.tournament_id: tournament.created_at})
            await pipe.execute()
        return tournament

    async def get(self, tournament_id: str) -> Tournament:
        """The newest copy; NOT_FOUND for unknown ids."""
        version, doc = await self.redis.hmget(self.key(tournament_id, "doc"), ["v", "doc"])
        if doc is None:
            raise not_found(f"tournament {tournament_id!r}")
        tournament = Tournament.from_dict(json.loads(doc))
        tournament.version = int(version)
        return tournament

    async def change(self, tournament_id: str, fn: Callable[[Tournament], Entry],
                     holder: str = "") -> tuple[Tournament, Entry]:
        """Apply ``fn`` to the newest copy; store it with its history entry atomically (an empty entry:
        none). With ``holder``, only while that director holds the lease (else :class:`LeaseLost`): a
        director that lost its lease while planning never writes over its successor."""
        tournament, entries = await self.change_many(tournament_id, lambda t: [fn(t)], holder)
        return tournament, entries[0]

    async def change_many(self, tournament_id: str, fn: Callable[[Tournament], list[Entry]],
                          holder: str = "") -> tuple[Tournament, list[Entry]]:
        """:meth:`change` with any number of history entries (empty ones skipped) in one write: a
        batch of registrations costs one read and write of the document, not one each."""
        for attempt in range(MAX_ATTEMPTS):
            if attempt:
                # Jittered backoff: two hundred players registering at once otherwise keep
                # overwriting each other's reads in lockstep.
                await asyncio.sleep(random.uniform(0, BACKOFF_SECONDS * 2 ** min(attempt, 6)))
            tournament = await self.get(tournament_id)
            entries = fn(tournament)
            now = time.time()
            for entry in entries:
                if entry:
                    entry["at"] = now
            saved = await self._write(tournament, [entry for entry in entries if entry], tournament.version,
                                      holder)
            if saved == LEASE_LOST:
                raise LeaseLost(tournament_id)
            if saved == 1:
                tournament.version += 1
                if tournament.status not in ACTIVE:
                    await self.redis.zrem(self.index_key("active"), tournament_id)
                return tournament, entries
        raise unavailable(f"tournament {tournament_id!r} is busy; retry")

    async def _write(self, tournament: Tournament, entries: list[Entry], expected: int, holder: str) -> int:
        document = json.dumps({**tournament.to_dict(), "version": expected + 1}, separators=(",", ":"))
        tid = tournament.tournament_id
        return int(await self._save(
            keys=[self.key(tid, "doc"), self.key(tid, "history"), self.key(tid, "lease")],
            args=[expected, document, holder, TTL_MS,
                  *(json.dumps(entry, separators=(",", ":")) for entry in entries)]))

    async def exists(self, tournament_id: str) -> bool:
        """Whether the tournament was created (and has not expired)."""
        return bool(await self.redis.exists(self.key(tournament_id, "doc")))

    async def newest(self, limit: int) -> list[Tournament]:
        """Newest first (ids whose document expired are skipped)."""
        ids = [raw.decode() for raw in await self.redis.zrevrange(self.index_key("all"), 0, limit - 1)]
        found = []
        for tournament_id in ids:
            try:
                found.append(await self.get(tournament_id))
            except ServiceError:  # expired since it was listed
                continue
        return found

    async def active(self) -> list[str]:
        """Tournaments a director must move on."""
        return [raw.decode() for raw in await self.redis.zrange(self.index_key("active"), 0, -1)]

    # -- history -------------------------------------------------------------------------------

    async def history(self, tournament_id: str, after: int, count: int = 200) -> list[tuple[int, Entry]]:
        """History entries after number ``after``, at most ``count``."""
        rows = await self.redis.xrange(self.key(tournament_id, "history"), f"({after}-0", "+", count=count)
        return [(int(raw_id.decode().partition("-")[0]), json.loads(fields[b"e"])) for raw_id, fields in rows]

    # -- results -------------------------------------------------------------------------------

    async def add_result(self, tournament_id: str, result: GameResult, extra: dict[str, Any]) -> bool:
        """Record a game once (by round, table and game); False when it was recorded before."""
        data = {"round": result.round, "table": result.table, "game": result.game,
                "seats": list(result.seats), "scores": list(result.scores), **extra}
        entry = {"change": "game_finished", "round": result.round, "table": result.table,
                 "game": result.game, "at": time.time()}
        field = f"{result.round}:{result.table}:{result.game}"
        return bool(await self._result(
            keys=[self.key(tournament_id, "results"), self.key(tournament_id, "history")],
            args=[field, json.dumps(data), json.dumps(entry), TTL_MS]))

    async def results(self, tournament_id: str) -> list[tuple[GameResult, dict[str, Any]]]:
        """Every recorded game (with what else was stored), in (round, table, game) order."""
        raw = await self.redis.hvals(self.key(tournament_id, "results"))
        rows = []
        for item in raw:
            data = json.loads(item)
            rows.append((GameResult(data["round"], data["table"], data["game"], tuple(data["seats"]),
                                    tuple(data["scores"])), data))
        return sorted(rows, key=lambda row: (row[0].round, row[0].table, row[0].game))

    # -- the director's lease ---------------------------------------------------------------------

    async def hold(self, tournament_id: str, holder: str, ttl_seconds: float) -> bool:
        """Take the lease if free, or renew it if ours; False while another director holds it
        (also the scheduler's lease, under a name no tournament id has: schedules.py)."""
        return bool(await self._lease(keys=[self.key(tournament_id, "lease")],
                                      args=[holder, int(ttl_seconds * 1000)]))

    async def release(self, tournament_id: str, holder: str) -> None:
        """Give the lease up (if still ours), so another director need not wait for it to expire."""
        await self._release(keys=[self.key(tournament_id, "lease")], args=[holder])

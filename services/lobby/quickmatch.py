"""Quick match: a queue per (game, seat count) in Redis; a full group gets a table at once.

Joining the queue and taking a full group out of it is one Lua script, so of
the replicas serving waiting players exactly one takes each group; it creates
the table with everyone seated and ready, starts the game, and tells each
player on a core NATS subject of their own (and in a short-lived Redis key, in
case the message is lost). Waiting streams keep a heartbeat in the queue: a
player whose replica died drops out instead of being matched into a game
nobody plays. A stream that ends before its match leaves the queue.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass

from nats.aio.msg import Msg

from services.lobby.catalog import check_seat_count
from services.lobby.model import LobbyTable
from services.lobby.players import PlayerNames
from services.lobby.tables import Lobby
from shared.infra.runtime import Runtime
from shared.obs.logs import get_logger
from shared.rpc.auth import Identity
from shared.rpc.catalog import game_named
from shared.rpc.errors import precondition, unavailable

log = get_logger("lobby.quickmatch")

#: How often a waiting stream beats, re-checks the queue and tries to match.
TICK_SECONDS = 1.0
#: A queued player without a heartbeat for this long is dropped.
STALE_SECONDS = 10.0
#: A stream that is neither queued nor matched for this long gives up.
LOST_SECONDS = 15.0
MATCH_TTL_SECONDS = 60

_JOIN_AND_MATCH = """
-- KEYS: order (by join time), alive (by heartbeat)
-- ARGV: group size, member ('' = only match), now, stale_before
local stale = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', '(' .. ARGV[4])
for _, member in ipairs(stale) do
  redis.call('ZREM', KEYS[1], member)
  redis.call('ZREM', KEYS[2], member)
end
if ARGV[2] ~= '' then
  if redis.call('ZADD', KEYS[1], 'NX', ARGV[3], ARGV[2]) == 0 then return {-1} end
  redis.call('ZADD', KEYS[2], ARGV[3], ARGV[2])
end
local size = tonumber(ARGV[1])
local count = redis.call('ZCARD', KEYS[1])
if count < size then return {count} end
local group = redis.call('ZRANGE', KEYS[1], 0, size - 1)
local out = {count - size}
for i, member in ipairs(group) do
  redis.call('ZREM', KEYS[1], member)
  redis.call('ZREM', KEYS[2], member)
  out[i + 1] = member
end
return out
"""


@dataclass(frozen=True)
class Queue:
    """One queue: a game and a seat count."""

    game: str
    seats: int

    @property
    def name(self) -> str:
        """Its name in keys and subjects."""
        return f"{self.game}:{self.seats}"


@dataclass(frozen=True)
class Seating:
    """Where a matched player sits."""

    table_id: str
    seat: int


@dataclass(frozen=True)
class Update:
    """What a waiting stream reports: the queue length, then the table and seat."""

    queued: int
    table: LobbyTable | None = None
    seat: int = -1


class QuickMatch:
    """Queues, matching and notifications of one process."""

    def __init__(self, runtime: Runtime, lobby: Lobby, names: PlayerNames) -> None:
        self.runtime = runtime
        self.redis = runtime.redis
        self.lobby = lobby
        self.names = names
        self._script = self.redis.register_script(_JOIN_AND_MATCH)

    # -- keys and subjects ------------------------------------------------------------------------

    def _keys(self, queue: Queue) -> list[str]:
        tag = "{queue:" + queue.name + "}"
        return [self.runtime.key("lobby", tag, "order"), self.runtime.key("lobby", tag, "alive")]

    def _match_key(self, queue: Queue, player_id: str) -> str:
        return self.runtime.key("lobby", "matched", queue.name, player_id)

    def _player_subject(self, player_id: str) -> str:
        return self.runtime.subject("lobby", "player", player_id)

    def _count_subject(self, queue: Queue) -> str:
        return self.runtime.subject("lobby", "queue", queue.game, str(queue.seats))

    # -- the stream ----------------------------------------------------------------------------------

    async def wait(self, who: Identity, game_name: str, seats: int) -> AsyncIterator[Update]:
        """Queue the caller; report the queue length until seated, then the table and seat."""
        game = game_named(game_name)
        queue = Queue(game, check_seat_count(game, seats))
        inbox: asyncio.Queue[tuple[str, dict[str, int | str]]] = asyncio.Queue()

        async def on_match(msg: Msg) -> None:
            news = json.loads(msg.data)
            if news.get("queue") == queue.name:
                inbox.put_nowait(("match", news))

        async def on_count(msg: Msg) -> None:
            inbox.put_nowait(("count", {"queued": int(msg.data)}))

        subscriptions = [await self.runtime.nats.subscribe(self._player_subject(who.player_id), cb=on_match),
                         await self.runtime.nats.subscribe(self._count_subject(queue), cb=on_count)]
        matched: Seating | None = None
        try:
            remaining, matched = await self._join_and_match(queue, who.player_id)
            reported = -1
            lost_since: float | None = None
            while matched is None:
                if remaining != reported and remaining > 0:  # 0: our group was just taken
                    yield Update(remaining)
                    reported = remaining
                try:
                    async with asyncio.timeout(TICK_SECONDS):  # wait_for may swallow a cancellation
                        kind, news = await inbox.get()
                except TimeoutError:
                    remaining, matched, lost_since = await self._tick(queue, who.player_id, lost_since)
                    continue
                if kind == "match":
                    matched = Seating(str(news["table_id"]), int(news["seat"]))
                else:
                    remaining = int(news["queued"])
            table = await self.lobby.get(matched.table_id)
            yield Update(await self.redis.zcard(self._keys(queue)[0]), table, matched.seat)
        finally:
            for subscription in subscriptions:
                with contextlib.suppress(Exception):
                    await subscription.unsubscribe()
            if matched is None:
                await self._leave(queue, who.player_id)

    async def _tick(self, queue: Queue, player_id: str, lost_since: float | None,
                    ) -> tuple[int, Seating | None, float | None]:
        """Heartbeat, the safety net for a lost notification, and a matching attempt."""
        order, alive = self._keys(queue)
        raw = await self.redis.get(self._match_key(queue, player_id))
        if raw is not None:
            news = json.loads(raw)
            return 0, Seating(news["table_id"], news["seat"]), None
        await self.redis.zadd(alive, {player_id: time.time()}, xx=True)
        if await self.redis.zscore(order, player_id) is None:
            lost_since = lost_since or time.time()
            if time.time() - lost_since > LOST_SECONDS:
                raise unavailable("matchmaking lost your place; start a quick match again")
        else:
            lost_since = None
        remaining, seated = await self._match(queue, member="")
        return remaining, seated.get(player_id), lost_since

    # -- the queue ---------------------------------------------------------------------------------

    async def _join_and_match(self, queue: Queue, player_id: str) -> tuple[int, Seating | None]:
        await self.redis.delete(self._match_key(queue, player_id))
        remaining, seated = await self._match(queue, member=player_id)
        if remaining < 0:
            raise precondition("you are already waiting in this queue")
        return remaining, seated.get(player_id)

    async def _match(self, queue: Queue, member: str) -> tuple[int, dict[str, Seating]]:
        """Join (unless ``member`` is empty) and seat a full group if there is one; returns the queue
        length after (-1: ``member`` was queued already) and the seats of the group this call seated."""
        now = time.time()
        result = await self._script(keys=self._keys(queue),
                                    args=[queue.seats, member, now, now - STALE_SECONDS])
        remaining = int(result[0])
        if remaining >= 0:
            await self._tell_count(queue, remaining)
        group = [raw.decode() for raw in result[1:]]
        return remaining, (await self._seat(queue, group) if group else {})

    async def _leave(self, queue: Queue, player_id: str) -> None:
        order, alive = self._keys(queue)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.zrem(order, player_id)
            pipe.zrem(alive, player_id)
            pipe.zcard(order)
            removed, _, remaining = await pipe.execute()
        if removed:
            await self._tell_count(queue, int(remaining))

    async def _tell_count(self, queue: Queue, remaining: int) -> None:
        await self.runtime.nats.publish(self._count_subject(queue), str(remaining).encode())

    async def _seat(self, queue: Queue, group: list[str]) -> dict[str, Seating]:
        """Create the group's table and tell every player where they sit."""
        names = await self.names.names(group)
        table = await self.lobby.create_seated(queue.game, list(zip(group, names, strict=True)))
        log.info("quick_match", table_id=table.table_id, queue=queue.name, players=len(group))
        seated = {}
        for seat, player_id in enumerate(group):
            seated[player_id] = Seating(table.table_id, seat)
            news = json.dumps({"queue": queue.name, "table_id": table.table_id, "seat": seat})
            await self.redis.set(self._match_key(queue, player_id), news, ex=MATCH_TTL_SECONDS)
            await self.runtime.nats.publish(self._player_subject(player_id), news.encode())
        return seated

"""Play by notification: "your turn", "time is almost up" and "game over" from the table news.

The engines stay pure: this follows the commits every table announces on NATS (one clubs
replica gets each, a queue group) at tables whose turn clock is at least ``min_turn_seconds``.
A decision a person owes is its seat's deadline in the commit; for it two reminders are
scheduled in Redis (on the player's shard, so firing one and writing its notification are one
transaction, and a reminder is sent once): "your turn" ``delay`` seconds later and "time is
almost up" at 80% of the clock. When one is due and the decision is still open (the table's
head has the same deadline), it goes to the inbox, unless the player watches the table (an
open stream, shared/tables/watchers.py): then it is looked at again a little later. Each
player's waiting games (table -> deadline) give ListWaitingGames and the push badge.

Live news is best effort: a commit announced while no clubs replica listens schedules nothing
by itself, so every replica, when it starts, also follows the head of every table with a
running clock (the clocks' own index): what it missed while no replica ran is scheduled then
(a reminder already scheduled or sent is not repeated).
"""

from __future__ import annotations

import time
from typing import Any

import orjson
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription

from services.clubs.inbox import Inbox
from services.clubs.keys import Keys
from shared.api.stammtisch.v1 import clubs_pb2
from shared.errors import NotFound
from shared.games.catalog import CATALOGUE, entry
from shared.infra.tasks import poll_forever
from shared.obs.logs import get_logger
from shared.tables.log import TableLog
from shared.tables.records import CommitRecord
from shared.tables.watchers import is_watching

log = get_logger("clubs.turns")

YOUR_TURN, ALMOST_UP = "turn", "late"
#: "time is almost up" at this share of the clock.
ALARM_AT = 0.8
#: A player watching the table is looked at again this much later.
RECHECK_SECONDS = 10.0
LEASE_SECONDS = 30.0
BATCH = 100
_CLAIM = """
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[3]))
for _, id in ipairs(due) do redis.call('ZADD', KEYS[1], ARGV[2], id) end
return due
"""
_KINDS = {YOUR_TURN: clubs_pb2.NOTIFICATION_KIND_YOUR_TURN,
          ALMOST_UP: clubs_pb2.NOTIFICATION_KIND_TIME_ALMOST_UP}


class TurnNotifier:
    """Schedules and sends the reminders of decisions at tables played by notification."""

    def __init__(self, keys: Keys, inbox: Inbox, delay: float, min_turn_seconds: float) -> None:
        self.keys = keys
        self.runtime = keys.runtime
        self.redis = keys.runtime.redis
        self.inbox = inbox
        self.delay = delay
        self.min_turn_seconds = min_turn_seconds
        self.heads = TableLog(keys.runtime)
        self._claim = self.redis.register_script(_CLAIM)
        self._subscription: Subscription | None = None

    def schedule_key(self, shard: int) -> str:
        """The reminders due on one shard (member: kind|table|seat|player|deadline)."""
        return self.runtime.shard_key("clubs", shard, "turns")

    async def start(self) -> None:
        """Follow every table's commits (each one reaches one replica)."""
        self._subscription = await self.runtime.nats.subscribe(
            self.runtime.subject_pattern("live", "*"), queue="clubs-turns", cb=self._arrived)

    async def catch_up(self) -> int:
        """Follow the newest commit of every table with a running clock; how many tables."""
        followed = 0
        one_game_per_service = {entry(game).service: game for game in CATALOGUE}.values()
        for game in one_game_per_service:  # the clocks' index is one per play service
            for shard in self.runtime.shards.all():
                for raw in await self.redis.zrange(self.heads.clocks_key(game, shard), 0, -1):
                    try:
                        await self.follow(await self.heads.head(raw.decode()))
                    except NotFound:
                        continue
                    followed += 1
        log.info("turns_caught_up", tables=followed)
        return followed

    async def stop(self) -> None:
        """Stop following."""
        if self._subscription is not None:
            await self._subscription.unsubscribe()
            self._subscription = None

    async def _arrived(self, msg: Msg) -> None:
        try:
            await self.follow(CommitRecord.decode(msg.data))
        except Exception:
            log.exception("turn_news_failed", subject=msg.subject)

    async def follow(self, record: CommitRecord) -> None:
        """Bring the waiting lists and reminders of the commit's people up to date."""
        meta = record.meta
        if meta.turn_seconds < self.min_turn_seconds:
            return
        over = any(event.get("type") == "game_over" for event in record.events)
        for seat, player_id in enumerate(meta.players):
            if not player_id or meta.is_bot(seat):
                continue
            deadline = None if over else record.deadlines.get(str(seat))
            if await self._newer_known(player_id, meta.table_id, record.seq):
                continue
            waiting = self.keys.player(player_id, "waiting")
            if deadline is None:
                await self.redis.hset(waiting, meta.table_id, orjson.dumps(
                    {"seq": record.seq, "deadline": 0, "game": meta.game}))
                if over and not await is_watching(self.runtime, meta.table_id, player_id):
                    await self.inbox.add(player_id, clubs_pb2.NOTIFICATION_KIND_GAME_OVER,
                                         f"Game over at your table of {meta.game}",
                                         collapse_key=f"turn:{meta.table_id}", table_id=meta.table_id)
                continue
            await self.redis.hset(waiting, meta.table_id, orjson.dumps(
                {"seq": record.seq, "deadline": deadline, "game": meta.game}))
            now = time.time()
            alarm = deadline - (1 - ALARM_AT) * meta.turn_seconds
            key = self.schedule_key(self.keys.shard_of(player_id))
            reminders = {f"{YOUR_TURN}|{meta.table_id}|{seat}|{player_id}|{deadline!r}": now + self.delay}
            if alarm > now:
                reminders[f"{ALMOST_UP}|{meta.table_id}|{seat}|{player_id}|{deadline!r}"] = alarm
            await self.redis.zadd(key, reminders, nx=True)  # a decision is reminded of once

    async def _newer_known(self, player_id: str, table_id: str, seq: int) -> bool:
        """Whether a later commit of the table was followed already (news may cross)."""
        raw = await self.redis.hget(self.keys.player(player_id, "waiting"), table_id)
        return raw is not None and int(orjson.loads(raw)["seq"]) > seq

    async def waiting(self, player_id: str) -> list[tuple[str, str, float]]:
        """(table, game, deadline) of the games waiting on the player, soonest first; finished
        decisions are dropped from the list."""
        key = self.keys.player(player_id, "waiting")
        found = await self.redis.hgetall(key)
        entries = {table.decode(): orjson.loads(raw) for table, raw in found.items()}
        done = [table for table, entry in entries.items() if not entry["deadline"]]
        if done:
            await self.redis.hdel(key, *done)
        return sorted(((table, entry["game"], float(entry["deadline"])) for table, entry in entries.items()
                       if entry["deadline"]), key=lambda item: item[2])

    async def send_forever(self, interval: float = 0.2) -> None:
        """Send due reminders until cancelled."""
        await poll_forever(self.send_once, interval, log, "turn_reminders_failed")

    async def send_once(self) -> int:
        """Claim and handle the reminders due now on every shard; how many."""
        handled = 0
        for shard in self.runtime.shards.all():
            now = time.time()
            key = self.schedule_key(shard)
            for raw in await self._claim(keys=[key], args=[now, now + LEASE_SECONDS, BATCH]):
                await self._remind(key, raw.decode())
                handled += 1
        return handled

    async def _remind(self, key: str, member: str) -> None:
        kind, table_id, seat, player_id, deadline = member.split("|")
        try:
            head = await self.heads.head(table_id)
        except NotFound:
            head = None
        owed = head is not None and repr(head.deadlines.get(seat)) == deadline and not head.meta.closed
        if not owed:
            await self.redis.zrem(key, member)
            return
        if await is_watching(self.runtime, table_id, player_id):
            await self.redis.zadd(key, {member: min(time.time() + RECHECK_SECONDS, float(deadline))})
            return
        assert head is not None
        text = (f"Your turn at {head.meta.game}" if kind == YOUR_TURN
                else f"Time is almost up at {head.meta.game}: decide before the clock answers for you")

        def take_off(pipe: Any) -> None:
            pipe.zrem(key, member)
        await self.inbox.add(player_id, _KINDS[kind], text, collapse_key=f"turn:{table_id}",
                             also=take_off, table_id=table_id)

"""Every player's inbox: notifications kept until read (the newest MAX_KEPT), an unread count,
live news on NATS for open apps, and a push job in the same transaction for closed phones."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass

import orjson
from redis.asyncio.client import Pipeline

from services.clubs.keys import Keys
from services.clubs.push import Outbox
from shared.api.stammtisch.v1 import clubs_pb2
from shared.obs.metrics import NOTIFICATIONS_CREATED

#: Notifications kept per player (the oldest go first).
MAX_KEPT = 500


@dataclass(frozen=True)
class Note:
    """One notification as stored (``kind``: a NotificationKind value)."""

    notification_id: str
    kind: int
    text: str
    created_at: float
    from_player_id: str = ""
    club_id: str = ""
    table_id: str = ""
    code: str = ""

    def kind_name(self) -> str:
        """The kind's short name ("YOUR_TURN")."""
        return clubs_pb2.NotificationKind.Name(self.kind).removeprefix("NOTIFICATION_KIND_")  # type: ignore[arg-type]


class Inbox:
    """Adds, lists and marks a player's notifications; ``add`` also queues its push."""

    def __init__(self, keys: Keys, outbox: Outbox) -> None:
        self.keys = keys
        self.redis = keys.runtime.redis
        self.outbox = outbox

    def subject(self, player_id: str) -> str:
        """The NATS subject of a player's live inbox news."""
        return self.keys.runtime.subject("clubs", "inbox", player_id)

    async def add(self, player_id: str, kind: int, text: str, collapse_key: str = "",
                  also: Callable[[Pipeline], object] | None = None, **fields: str) -> Note:
        """Store a notification, queue its push (unless the player's preferences mute it) in the
        same transaction, then tell the player's open apps. ``also`` adds writes of the player's
        shard to that transaction (such as taking a scheduled reminder off its list)."""
        note = Note(uuid.uuid4().hex, kind, text, time.time(), **fields)
        job = await self.outbox.job_for(player_id, note.notification_id, note.kind_name(), text,
                                        collapse_key or note.notification_id,
                                        {k: v for k, v in fields.items() if v}, note.created_at)
        index, docs, unread = (self.keys.player(player_id, name) for name in ("inbox", "notes", "unread"))
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.zadd(index, {note.notification_id: note.created_at})
            pipe.hset(docs, note.notification_id, orjson.dumps(asdict(note)))
            pipe.sadd(unread, note.notification_id)
            if job is not None:
                self.outbox.queue(pipe, job)
            if also is not None:
                also(pipe)
            await pipe.execute()
        NOTIFICATIONS_CREATED.labels(kind=note.kind_name()).inc()
        await self._trim(player_id)
        await self.keys.runtime.nats.publish(self.subject(player_id), orjson.dumps(asdict(note)))
        return note

    async def _trim(self, player_id: str) -> None:
        index = self.keys.player(player_id, "inbox")
        old = await self.redis.zrange(index, 0, -MAX_KEPT - 1)
        if old:
            ids = [raw.decode() for raw in old]
            async with self.redis.pipeline(transaction=True) as pipe:
                pipe.zrem(index, *ids)
                pipe.hdel(self.keys.player(player_id, "notes"), *ids)
                pipe.srem(self.keys.player(player_id, "unread"), *ids)
                await pipe.execute()

    async def page(self, player_id: str, size: int, before: float | None,
                   unread_only: bool) -> tuple[list[tuple[Note, bool]], float | None]:
        """Up to ``size`` notifications older than ``before``, newest first, each with whether it
        was read; and the time to continue from (None: no more)."""
        index = self.keys.player(player_id, "inbox")
        found: list[tuple[Note, bool]] = []
        upper: float | str = "+inf" if before is None else f"({before}"
        while len(found) < size:
            rows = await self.redis.zrevrangebyscore(index, upper, "-inf", start=0, num=size * 2,
                                                     withscores=True)
            if not rows:
                return found, None
            ids = [raw.decode() for raw, _ in rows]
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.hmget(self.keys.player(player_id, "notes"), ids)
                pipe.smismember(self.keys.player(player_id, "unread"), ids)
                docs, unread = await pipe.execute()
            for doc, is_unread, (_, score) in zip(docs, unread, rows, strict=True):
                upper = f"({score}"
                if doc is None or (unread_only and not is_unread):
                    continue
                found.append((Note(**orjson.loads(doc)), not is_unread))
                if len(found) == size:
                    return found, score
        return found, None

    async def unread_count(self, player_id: str) -> int:
        """How many notifications the player has not read."""
        return int(await self.redis.scard(self.keys.player(player_id, "unread")))

    async def mark_read(self, player_id: str, ids: list[str], everything: bool) -> int:
        """Mark some (or all) read; the unread count after."""
        unread = self.keys.player(player_id, "unread")
        if everything:
            await self.redis.delete(unread)
        elif ids:
            await self.redis.srem(unread, *ids)
        return await self.unread_count(player_id)

    async def forget(self, player_id: str) -> None:
        """Delete a player's whole inbox (account deletion)."""
        await self.redis.delete(*(self.keys.player(player_id, name) for name in ("inbox", "notes", "unread")))

    async def export(self, player_id: str) -> list[dict[str, object]]:
        """Every notification of the player, for ExportMyData."""
        docs = await self.redis.hvals(self.keys.player(player_id, "notes"))
        return sorted((orjson.loads(doc) for doc in docs), key=lambda note: note["created_at"])


def note_proto(note: Note, read: bool) -> clubs_pb2.Notification:
    """A stored notification as the API shows it."""
    reply = clubs_pb2.Notification(
        notification_id=note.notification_id, kind=note.kind, text=note.text,  # type: ignore[arg-type]
        from_player_id=note.from_player_id, club_id=note.club_id, table_id=note.table_id,
        code=note.code, read=read)
    reply.created_at.FromNanoseconds(int(note.created_at * 1e9))
    return reply



"""A club's chat: plain text lines numbered by the club, the newest KEPT of them."""

from __future__ import annotations

import re
import time
from dataclasses import asdict, dataclass

import orjson

from services.clubs.keys import Keys
from shared.errors import BadInput, NotFound

MAX_TEXT = 500
KEPT = 1000
#: Control characters (C0 but tab and newline, DEL, C1) and the Unicode direction overrides.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


@dataclass
class Line:
    """One chat message."""

    message_id: int
    player_id: str
    text: str
    sent_at: float
    deleted: bool = False


def check_text(text: str) -> str:
    """Chat text: 1 to MAX_TEXT characters after trimming, no control characters; else BadInput."""
    text = text.strip()
    if not 0 < len(text) <= MAX_TEXT:
        raise BadInput(f"text must be 1 to {MAX_TEXT} characters")
    if _CONTROL.search(text):
        raise BadInput("text must be plain text without control characters")
    return text


class Chat:
    """Posts, lists and deletes club chat lines."""

    def __init__(self, keys: Keys) -> None:
        self.keys = keys
        self.redis = keys.runtime.redis

    async def post(self, club_id: str, player_id: str, text: str) -> Line:
        """Append a line; the oldest beyond KEPT goes."""
        message_id = int(await self.redis.incr(self.keys.club(club_id, "chat-seq")))
        line = Line(message_id, player_id, text, time.time())
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hset(self.keys.club(club_id, "chat"), str(message_id), orjson.dumps(asdict(line)))
            if message_id > KEPT:
                pipe.hdel(self.keys.club(club_id, "chat"), str(message_id - KEPT))
            await pipe.execute()
        return line

    async def page(self, club_id: str, before_id: int, limit: int) -> list[Line]:
        """Up to ``limit`` lines before ``before_id`` (0: the newest), newest first."""
        newest = int(await self.redis.get(self.keys.club(club_id, "chat-seq")) or 0)
        top = newest if before_id <= 0 else min(newest, before_id - 1)
        ids = [str(i) for i in range(top, max(0, top - limit), -1)]
        if not ids:
            return []
        docs = await self.redis.hmget(self.keys.club(club_id, "chat"), ids)
        return [Line(**orjson.loads(doc)) for doc in docs if doc is not None]

    async def get(self, club_id: str, message_id: int) -> Line:
        """One line, else NotFound."""
        doc = await self.redis.hget(self.keys.club(club_id, "chat"), str(message_id))
        if doc is None:
            raise NotFound("message")
        return Line(**orjson.loads(doc))

    async def delete(self, club_id: str, line: Line) -> None:
        """Blank a line; it stays in the order as deleted."""
        line.text, line.deleted = "", True
        await self.redis.hset(self.keys.club(club_id, "chat"), str(line.message_id),
                              orjson.dumps(asdict(line)))

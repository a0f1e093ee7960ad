"""Tournament news into players' inboxes: "starts soon" and "you are seated" of every tournament.

The tournament service publishes one plain NATS message per player (services/tournament/notify.py);
the clubs replicas share them in a queue group, and each (tournament, round, player) is told once
(a Redis key, SET NX), so a message that reaches two replicas, or a club evening's own seating
loop, never makes a second notification.
"""

from __future__ import annotations

from typing import Any

import orjson
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription

from services.clubs.inbox import Inbox
from services.clubs.keys import Keys
from shared.api.stammtisch.v1 import clubs_pb2
from shared.obs.logs import get_logger

log = get_logger("clubs.tournament_news")

QUEUE = "clubs-tournament-news"
#: How long a "told once" key is kept (longer than any tournament's round).
ONCE_SECONDS = 7 * 86_400


class TournamentNews:
    """Turns tournament news into TOURNAMENT_STARTING_SOON and TOURNAMENT_SEATED notifications."""

    def __init__(self, keys: Keys, inbox: Inbox) -> None:
        self.keys = keys
        self.runtime = keys.runtime
        self.redis = keys.runtime.redis
        self.inbox = inbox
        self._subscription: Subscription | None = None

    async def start(self) -> None:
        """Follow every player's tournament news (each message reaches one replica)."""
        self._subscription = await self.runtime.nats.subscribe(
            self.runtime.subject_pattern("tournament", "news", "*"), queue=QUEUE, cb=self._arrived)

    async def stop(self) -> None:
        """Stop following."""
        if self._subscription is not None:
            await self._subscription.unsubscribe()
            self._subscription = None

    async def _arrived(self, msg: Msg) -> None:
        try:
            await self.tell(orjson.loads(msg.data))
        except Exception:
            log.exception("tournament_news_failed", subject=msg.subject)

    async def tell(self, news: dict[str, Any]) -> bool:
        """Notify the news's player; False when told before or of a kind not for inboxes (a malformed
        message raises KeyError or ValueError, which the subscriber logs)."""
        kind, player_id, tournament_id = news.get("kind"), str(news["player_id"]), str(news["tournament_id"])
        name = str(news.get("name", ""))
        if kind == "seated":
            return await self.seated(player_id, tournament_id, name, int(news["round"]),
                                     int(news["table"]) - 1, int(news["seat"]), str(news["table_id"]))
        if kind == "starting_soon":
            return await self._once(("soon", tournament_id, player_id), player_id,
                                    clubs_pb2.NOTIFICATION_KIND_TOURNAMENT_STARTING_SOON,
                                    f"{name} starts soon",
                                    collapse_key=f"seated:{tournament_id}")
        return False

    async def seated(self, player_id: str, tournament_id: str, name: str, round_no: int, table: int,
                     seat: int, table_id: str) -> bool:
        """Tell a player its table and seat of a round, once per (tournament, round, player)."""
        return await self._once(("seated", tournament_id, str(round_no), player_id), player_id,
                                clubs_pb2.NOTIFICATION_KIND_TOURNAMENT_SEATED,
                                f"{name}, round {round_no}: table {table + 1}, seat {seat}",
                                collapse_key=f"seated:{tournament_id}", table_id=table_id)

    async def _once(self, parts: tuple[str, ...], player_id: str, kind: int, text: str, collapse_key: str,
                    **fields: str) -> bool:
        """Add the notification unless its key was taken; a failed add gives the key back."""
        key = self.keys.global_(*parts)
        if not await self.redis.set(key, 1, nx=True, ex=ONCE_SECONDS):
            return False
        try:
            await self.inbox.add(player_id, kind, text, collapse_key, None, **fields)
        except Exception:
            await self.redis.delete(key)
            raise
        return True

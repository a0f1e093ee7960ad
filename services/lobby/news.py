"""What happens at a table, told to whoever listens.

Watchers (WatchTable streams on any replica) hear seating, readiness, chat and
games starting and ending on a core NATS subject per table: best effort, each
message carries the whole table, so a missed one is healed by the next.
Other services hear a table's lifecycle (``started``, ``finished``, ``closed``)
durably on JetStream ``<prefix>.tables.<table_id>.<change>``, de-duplicated
by message id (and retried through a stream leader election).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator
from typing import Any

from nats.aio.msg import Msg

from services.lobby.model import LobbyTable
from shared.infra.jetstream import publish_deduplicated
from shared.infra.runtime import Runtime

QUEUE_SIZE = 256


class TableNews:
    """Publishes and subscribes to table news for one process."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    def subject(self, table_id: str) -> str:
        """Core NATS subject of one table's news (ids are checked to be subject-safe)."""
        return self.runtime.subject("lobby", "table", table_id)

    async def tell(self, table: LobbyTable, change: str, player_id: str = "", text: str = "") -> None:
        """Tell the table's watchers what changed, with the table as it is now."""
        news = {"change": "closed" if table.closed else change, "player_id": player_id,
                "text": text, "table": table.to_dict()}
        await self.runtime.nats.publish(self.subject(table.table_id), json.dumps(news).encode())

    async def record(self, table: LobbyTable, change: str, **details: Any) -> None:
        """A lifecycle event for other services, durable and de-duplicated per game and change."""
        payload = {"table_id": table.table_id, "game": table.game, "game_no": table.games_played,
                   "change": change, "at": time.time(), **details}
        subject = self.runtime.subject("tables", table.table_id, change)
        await publish_deduplicated(self.runtime.js, subject, json.dumps(payload).encode(),
                                   f"{table.table_id}:{table.games_played}:{change}")

    @contextlib.asynccontextmanager
    async def listen(self, table_id: str) -> AsyncIterator[asyncio.Queue[dict[str, Any]]]:
        """A queue of the table's news for as long as the context lasts."""
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue(QUEUE_SIZE)

        async def deliver(msg: Msg) -> None:
            with contextlib.suppress(asyncio.QueueFull):
                queue.put_nowait(json.loads(msg.data))

        subscription = await self.runtime.nats.subscribe(self.subject(table_id), cb=deliver)
        try:
            yield queue
        finally:
            with contextlib.suppress(Exception):
                await subscription.unsubscribe()

"""How long a lobby table lives: no table stays open forever, whatever its clients do.

Two rules (shared/tables/README.md, "Table lifetime") close the tables nobody plays:

- **idle**: a running game that no person changed for ``idle_close_seconds`` is
  closed by its own clock (shared/tables/clocks.py, event ``table_closed``); the
  lobby then closes the table;
- **expired**: a table with no game running closes ``waiting_close_seconds``
  after it was created or its last game ended, unless a game has started by
  then, however busy its seats and chat are.

The lobby keeps one sorted set, table id -> when to look at the table next.
Events only ever bring that time forward; every lobby replica sweeps what is
due, decides again from the table document and the game's head, and closes by
compare-and-set on the document, so a table is closed once and never while a
game that started meanwhile runs.
"""

from __future__ import annotations

import time

from services.lobby.model import LobbyTable, Moved, Status
from services.lobby.news import TableNews
from services.lobby.store import TableRepository
from shared.errors import NotFound
from shared.infra.runtime import Runtime
from shared.infra.tasks import poll_forever
from shared.obs.logs import get_logger
from shared.obs.metrics import TABLES_CLOSED
from shared.tables.clocks import IDLE_KEY
from shared.tables.log import TableLog

log = get_logger("lobby.lifetime")

#: Why a table with no game running was closed (WatchTable's ``text`` with change "closed").
CLOSED_EXPIRED = "expired"
#: How long after a game's idle deadline the lobby looks, so that the game's clock closes it first.
CLOCK_LAG_SECONDS = 1.0
#: Tables looked at per sweep.
BATCH = 100


class TableLifetime:
    """Closes the lobby tables whose time is up; one per lobby process."""

    def __init__(self, runtime: Runtime, repo: TableRepository, news: TableNews) -> None:
        self.redis = runtime.redis
        self.repo = repo
        self.news = news
        self.key = runtime.key("lobby", "lifetime")
        # Reads game heads only, so it never uses the deadline policy.
        self.store = TableLog(runtime)
        self.idle_seconds = runtime.settings.idle_close_seconds
        self.waiting_seconds = runtime.settings.waiting_close_seconds
        self.interval = min(1.0, self.idle_seconds / 4, self.waiting_seconds / 4)

    async def waiting_from(self, table_id: str, since: float) -> None:
        """The table has no game running from ``since`` (created, or its game ended)."""
        await self._remind(table_id, since + self.waiting_seconds)

    async def game_started(self, table_id: str) -> None:
        """A game started: look again when it could first be closed for idleness."""
        await self._remind(table_id, time.time() + self.idle_seconds + CLOCK_LAG_SECONDS)

    async def _remind(self, table_id: str, at: float) -> None:
        await self.redis.zadd(self.key, {table_id: at}, lt=True)

    async def run_forever(self) -> None:
        """Sweep until cancelled."""
        await poll_forever(self.sweep, self.interval, log, "lifetime_sweep_failed")

    async def sweep(self) -> bool:
        """Look at the tables that are due; True when there may be more."""
        now = time.time()
        due = await self.redis.zrangebyscore(self.key, "-inf", now, start=0, num=BATCH)
        for raw in due:
            await self.look_at(raw.decode(), now)
        return len(due) == BATCH

    async def look_at(self, table_id: str, now: float) -> None:
        """Close the table if a rule says so now, else note when to look again."""
        try:
            table = await self.repo.get(table_id)
        except NotFound:  # closed already (or never stored): nothing to watch
            await self.redis.zrem(self.key, table_id)
            return
        at, reason = await self._verdict(table, now)
        if at > now:
            await self.redis.zadd(self.key, {table_id: at})
        elif await self._close(table, reason):
            await self.redis.zrem(self.key, table_id)

    async def _verdict(self, table: LobbyTable, now: float) -> tuple[float, str]:
        """When the rules close the table as it is now, and why (closed now when not after ``now``).
        A seat held for an invited player (services/clubs) keeps a waiting table until the hold ends."""
        held = max((until for _player, until in table.holds.values()), default=0.0)
        if not table.games_played:
            return max(table.created_at + self.waiting_seconds, held), CLOSED_EXPIRED
        try:
            head = await self.store.head(table.table_id)
        except NotFound:  # the last game's keys are gone: it ended long ago
            return now, CLOSED_EXPIRED
        if head.meta.game_no != table.games_played:  # the game is being created right now
            return now + CLOCK_LAG_SECONDS, ""
        if head.meta.closed:
            return now, head.meta.closed
        if table.status == Status.PLAYING and not head.game().over:
            return max(head.deadlines.get(IDLE_KEY, now), now) + CLOCK_LAG_SECONDS, ""
        return max(head.at + self.waiting_seconds, held), CLOSED_EXPIRED  # head.at: when the game ended

    async def _close(self, seen: LobbyTable, reason: str) -> bool:
        """Close the table unless a game started or ended since ``seen``; True when it is closed."""

        def close(table: LobbyTable) -> None:
            if (table.status, table.games_played) != (seen.status, seen.games_played):
                raise Moved
            table.closed = True

        try:
            table, _ = await self.repo.change(seen.table_id, close)
        except Moved:  # looked at again on the next sweep
            return False
        except NotFound:  # closed meanwhile
            return True
        log.info("table_closed", table_id=table.table_id, reason=reason, game_no=table.games_played)
        if reason == CLOSED_EXPIRED:  # an idle game was counted by the clock that closed it
            TABLES_CLOSED.labels(table.game, reason).inc()
        await self.news.tell(table, "closed", text=reason)
        await self.news.record(table, "closed", reason=reason)
        return True

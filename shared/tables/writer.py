"""The one write path of live tables: commit, then announce, in commit order.

Play, the clocks, a lobby series and a tournament's play-outs all change tables
through a :class:`TableWriter`, so no commit goes unannounced and every writer
keeps the deployment's deadlines (turn clocks, bot pacing, the idle close).
A caller cancelled while its commit is announced (a client that gave up on its
Act, a closed Play stream) leaves the announcement to a task of its own: the
commit stands, so its news and its result go out at once, not at the relay's sweep.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from shared.games.base import Game
from shared.infra.runtime import Runtime
from shared.tables.announce import Announcer
from shared.tables.clocks import deadline_policy
from shared.tables.records import CommitRecord, TableMeta
from shared.tables.store import Change, TableStore


class TableWriter:
    """Commits to the tables of one deployment and announces each new commit (never raises for
    the announcement: subscribers heal from the log and the relay re-publishes results)."""

    def __init__(self, runtime: Runtime, store: TableStore | None = None) -> None:
        """Writes through ``store``, else one with the deployment's deadlines (its settings)."""
        settings = runtime.settings
        self.store = store or TableStore(runtime, deadline_policy(settings.bot_delay_seconds,
                                                                  settings.idle_close_seconds))
        self.announcer = Announcer(runtime, self.store)
        #: Announcements under way (held here: the loop keeps only weak references to tasks).
        self._announcing: set[asyncio.Task[None]] = set()

    async def commit(self, table_id: str, change_fn: Callable[[CommitRecord | None], Change],
                     act_key: str = "") -> tuple[CommitRecord | None, dict[str, Any] | None]:
        """:meth:`TableStore.commit`, announced when it made a commit (not for a stored answer)."""
        record, answer = await self.store.commit(table_id, change_fn, act_key)
        if answer is None and record is not None:
            await self._announce(record)
        return record, answer

    async def create(self, meta: TableMeta, game: Game, events: list[dict[str, Any]]) -> CommitRecord:
        """:meth:`TableStore.create`, announced."""
        record = await self.store.create(meta, game, events)
        await self._announce(record)
        return record

    async def _announce(self, record: CommitRecord) -> None:
        """Announce ``record`` in the caller's task (no extra turn of the loop: this process's
        streams get it before the caller goes on); a caller cancelled meanwhile leaves the
        announcement to a task of its own, which a cancel cannot stop."""
        try:
            await self.announcer.announce(record)
        except asyncio.CancelledError:
            # Announcing again is harmless: streams skip a commit they have, JetStream a result
            # it has (by its message id).
            task = asyncio.create_task(self.announcer.announce(record),
                                       name=f"announce:{record.meta.table_id}:{record.seq}")
            self._announcing.add(task)
            task.add_done_callback(self._announcing.discard)
            raise

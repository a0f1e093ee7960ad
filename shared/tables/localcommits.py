"""This process's own commits, handed straight to this process's feeds.

Live news travels on a NATS connection of its own that does not echo what it
publishes (``no_echo``): a commit reaches every other process through NATS and
the process that made it through here, at once and in the order its commits
were announced, without the trip to the NATS server and back (and without
parsing the message again). A commit of another process that this process
read from Redis before its announcement came (the head a commit of its own
follows) goes the same way, so its streams see no gap. Feeds heal any gap
from the log either way, and skip a commit they have already had.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from shared.tables.records import CommitRecord

#: Takes one commit; must not block or raise (a feed puts it into its streams' queues).
Listener = Callable[["CommitRecord"], None]


class LocalCommits:
    """Listeners per table id, for this process."""

    def __init__(self) -> None:
        self._listeners: dict[str, list[Listener]] = {}

    def listen(self, table_id: str, listener: Listener) -> None:
        """Hand ``listener`` every commit of the table this process announces from now on."""
        self._listeners.setdefault(table_id, []).append(listener)

    def forget(self, table_id: str, listener: Listener) -> None:
        """Undo :meth:`listen`."""
        listeners = self._listeners.get(table_id, [])
        if listener in listeners:
            listeners.remove(listener)
        if not listeners:
            self._listeners.pop(table_id, None)

    def deliver(self, record: CommitRecord) -> None:
        """A commit this process just made or read first, to every listener of its table."""
        for listener in tuple(self._listeners.get(record.meta.table_id, ())):
            listener(record)

"""This process's own news, handed straight to this process's listeners.

Live table news travels on a NATS connection of its own that does not echo
what it publishes (``no_echo``): a commit reaches every other process through
NATS and the process that made it through here, at once and in the order it
was announced, without the trip to the NATS server and back. A commit of
another process read from Redis first goes the same way, so no stream sees a
gap. Listeners heal any gap from the log either way.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

#: Takes one item; must not block or raise (a feed puts it into its streams' queues).
Listener = Callable[[Any], None]


class LocalFanout:
    """Listeners per key (a table id), for this process."""

    def __init__(self) -> None:
        self._listeners: dict[str, list[Listener]] = {}

    def listen(self, key: str, listener: Listener) -> None:
        """Hand ``listener`` every item delivered under ``key`` from now on."""
        self._listeners.setdefault(key, []).append(listener)

    def forget(self, key: str, listener: Listener) -> None:
        """Undo :meth:`listen`."""
        listeners = self._listeners.get(key, [])
        if listener in listeners:
            listeners.remove(listener)
        if not listeners:
            self._listeners.pop(key, None)

    def deliver(self, key: str, item: Any) -> None:
        """An item this process just made or read first, to every listener of its key."""
        for listener in tuple(self._listeners.get(key, ())):
            listener(item)

"""The arbiter: real-time tables of the simultaneous games (the catalogue's ``service``
"arbiter"), ordered by atomic commits in Redis.

Every seat acts whenever it likes; whichever commit lands first in Redis wins,
from any replica. An action may carry what it was meant for (an ``attach``'s
``at``, any action's ``round``), so a lost race is STALE, never a misplaced move.
"""

from __future__ import annotations

from services.host.base import Service
from services.play.servicer import PlayService
from shared.infra.runtime import Runtime


class ArbiterService(PlayService):
    """Simultaneous tables: the shared play servicer; round time limits and bots run on clocks."""

    name = "arbiter"
    full_name = "stammtisch.v1.ArbiterService"


def create(runtime: Runtime) -> Service:
    """Entry point for the runner."""
    return ArbiterService(runtime)

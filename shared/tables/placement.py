"""Which worker of `stammtisch up --workers N` holds a table, and at which port.

The N workers share each service's port and the kernel hands each connection to any of them,
so a table's players would sit on different workers and every commit would be decoded and its
views made again on each. So a table belongs to the worker its id's CRC-32 picks, and the lobby
tells players that worker's own port (``Table.play_port``). Every worker still serves every
table on the shared ports: placement spares work, correctness never depends on it.
"""

from __future__ import annotations

import zlib

from shared.config import Settings
from shared.games.catalog import CATALOGUE, entry

#: The services that play tables (each game is played by one of them).
TABLE_SERVICES: tuple[str, ...] = tuple(sorted({game.service for game in CATALOGUE.values()}))


def own_port(settings: Settings, service: str) -> int:
    """The port where this worker alone serves ``service`` (0: none, one process)."""
    ports = settings.table_ports.get(service, ())
    return ports[settings.worker_slot] if ports else 0


def play_port(settings: Settings, game: str, table_id: str) -> int:
    """The port of the worker that holds the table (0: no placement, one process)."""
    ports = settings.table_ports.get(entry(game).service, ())
    return ports[zlib.crc32(table_id.encode()) % len(ports)] if ports else 0

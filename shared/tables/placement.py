"""Which worker of `stammtisch up --workers N` holds a table, and at which port.

The N workers share each service's port, and the kernel hands every new
connection to any of them: the four players of a table mostly sat on
different workers. Each commit then reached the other worker through NATS,
which decoded it, restored the engine and made its views a second time
(measured with two workers at about 1,000 Wie Waldi actions/s: 1.05 ms of
server CPU per action where one worker per table needed 0.79, and a p99 of
18 to 55 ms where it had 8).

So each worker also listens on a port of its own for each table service
(engine, arbiter). A table belongs to the worker its id's CRC-32 picks; the
lobby tells players that port (``Table.play_port``) and the SDK plays the
table there. Every worker still serves every table on the shared ports (a
client that ignores the port, a worker that is restarting): the placement
spares work, correctness never depends on it.
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

"""What one commit stores: the table's new state, its public events and its meta.

Records are JSON (orjson) compressed with zlib: the full engine state is kept
per commit so that any replica can rebuild any seat's view at any sequence
number (resuming clients, retried actions) without replaying the game.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field, fields
from typing import Any

import orjson

from shared.games.base import Event, Game
from shared.games.registry import engine_class


@dataclass
class TableMeta:
    """Who sits where and how the table is run; changes only through commits."""

    table_id: str
    game: str
    #: Player id per seat ("" while a bot or nobody plays it).
    players: list[str]
    #: Seat (as str) -> bot level for seats a bot plays.
    bots: dict[str, str] = field(default_factory=dict)
    turn_seconds: float = 0.0
    game_no: int = 1
    seed: int = 0
    #: Hex salt of the seed commitment (shared/history/fairness.py); secret like the seed until
    #: the game is over.
    salt: str = ""
    options: dict[str, Any] = field(default_factory=dict)
    #: Why the table was closed before its game ended ("" while it is open): see clocks.py.
    closed: str = ""

    def seat_of(self, player_id: str) -> int | None:
        """The seat of a player at this table, if seated."""
        return self.players.index(player_id) if player_id in self.players else None

    def is_bot(self, seat: int) -> bool:
        """True when a bot plays the seat."""
        return str(seat) in self.bots


@dataclass
class CommitRecord:
    """One entry of a table's log: everything needed to show seq to anyone."""

    seq: int
    at: float
    meta: TableMeta
    state: dict[str, Any]
    events: list[Event]
    #: Deadline key (seat as str, or "round") -> unix time it expires.
    deadlines: dict[str, float]
    #: The seat whose action this commit applied, whoever chose it: its player, its bot, or its
    #: turn clock (the default action on expiry). None when no seat acted: the game start, a
    #: round's time limit (Wie Waldi), seating changes.
    actor: int | None = None
    action: dict[str, Any] | None = None
    _blob: bytes | None = field(default=None, init=False, repr=False, compare=False)

    def game(self) -> Game:
        """The engine restored at this sequence number."""
        return engine_class(self.meta.game).from_dict(self.state)

    def encode(self) -> bytes:
        """Compact bytes for Redis and NATS, made once: the commit and its announcement share them."""
        if self._blob is None:
            # Shallow on purpose: the fields already are JSON data, and asdict() would deep-copy
            # the whole engine state (and the meta, leaf by leaf).
            data = {f.name: getattr(self, f.name) for f in fields(self) if f.init}
            data["meta"] = dict(vars(self.meta))
            self._blob = zlib.compress(dumps(data), 1)
        return self._blob

    @classmethod
    def decode(cls, blob: bytes) -> CommitRecord:
        """Inverse of :meth:`encode`; the record keeps ``blob``, so it is never encoded again."""
        data = orjson.loads(zlib.decompress(blob))
        data["meta"] = TableMeta(**data["meta"])
        record = cls(**data)
        record._blob = blob
        return record


def dumps(value: Any) -> bytes:
    """Compact JSON of plain data, as the json module would write it (int keys become strings)."""
    return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)

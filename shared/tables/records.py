"""What one commit stores: the table's new state, its public events and its meta.

Whole records (the head and the log's snapshots) are JSON via orjson, not compressed: zlib would
cost most of each commit's encoding for little space. A log entry between snapshots is plain JSON
of the action, its events and deadlines; any replica rebuilds any seq from the nearest snapshot
before it by re-applying the actions after it with the pure engine (shared/tables/README.md, "Storage: the
head and the log"; older zlib-compressed records still decode).
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import Any

import orjson

from shared.games.base import Event, Game
from shared.games.record import dumps
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
    #: Hex salt of the seed commitment (shared/archive/fairness.py); secret like the seed until
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


class CommitRecord:
    """One commit of a table: everything needed to show its seq to anyone. The head holds the newest
    whole (:meth:`encode`); the log holds it whole only as a snapshot, else as its :meth:`entry`,
    rebuilt by re-applying the action to the commit before (:func:`replay`)."""

    def __init__(self, seq: int, at: float, meta: TableMeta, state: dict[str, Any] | None,
                 events: list[Event], deadlines: dict[str, float], actor: int | None = None,
                 action: dict[str, Any] | None = None, engine: Game | None = None) -> None:
        assert state is not None or engine is not None, "a commit needs its state or its engine"
        self.seq = seq
        self.at = at
        self.meta = meta
        self.events = events
        #: Deadline key (seat as str, or "round") -> unix time it expires.
        self.deadlines = deadlines
        #: The seat whose action this commit applied, whoever chose it: its player, its bot, or
        #: its turn clock (the default action on expiry). None when no seat acted: the game
        #: start, a round's time limit, seating changes, the table's close.
        self.actor = actor
        self.action = action
        #: The state as JSON data: decoded from a blob, or made from the engine when asked for.
        self._state = state
        #: The engine at this seq, shared and never changed while held here (views are made from
        #: it); the next commit takes it over (:meth:`hand_over_engine`) or copies it.
        self._engine = engine
        #: The state's JSON, once encoded or once the engine went on to the next commit.
        self._state_json: bytes | None = None
        self._blob: bytes | None = None

    @property
    def state(self) -> dict[str, Any]:
        """The engine's whole state at this seq (hidden cards included)."""
        if self._state is None:
            if self._engine is not None:
                self._state = self._engine.to_dict()
            else:
                assert self._state_json is not None
                self._state = orjson.loads(self._state_json)
        return self._state

    def hand_over_engine(self) -> Game:
        """Keep only the state's JSON and give the engine away to be changed at will (the next commit, a
        replay walking a log page): an engine copy costs several times the JSON the record already has.
        A view asked for later, or a refused next change, restores the engine from the JSON."""
        engine = self.engine()
        if self._state_json is None:
            self._state_json = engine.state_json()
        self._engine = None
        return engine

    def game(self) -> Game:
        """The engine restored at this sequence number: the caller's own, to change at will."""
        if self._engine is not None:
            return self._engine.copy()
        return engine_class(self.meta.game).from_dict(self.state)

    def engine(self) -> Game:
        """The engine at this seq, shared: for views only, never to be changed."""
        if self._engine is None:
            self._engine = self.game()
        return self._engine

    def encode(self) -> bytes:
        """Compact bytes for the head, NATS and log snapshots, made once: the commit and its
        announcement share them."""
        if self._blob is None:
            # Shallow: the fields already are JSON data (asdict() would copy the meta leaf by leaf).
            # The engine's state is written straight from its records: a commit never copies it
            # into JSON data first. Its JSON is kept: the next commit takes the engine over.
            if self._engine is not None and self._state_json is None:
                self._state_json = self._engine.state_json()
            state: Any = self._state if self._state_json is None else orjson.Fragment(self._state_json)
            data = {"seq": self.seq, "at": self.at, "meta": dict(vars(self.meta)), "state": state,
                    "events": self.events, "deadlines": self.deadlines, "actor": self.actor,
                    "action": self.action}
            self._blob = dumps(data)
        return self._blob

    def entry(self) -> bytes:
        """The log entry of a commit that is not a snapshot: what :func:`replay` needs and what
        every update shows besides the view (no state, no meta: the snapshot before it has them)."""
        return dumps({"seq": self.seq, "at": self.at, "events": self.events,
                      "deadlines": self.deadlines, "actor": self.actor, "action": self.action})

    @classmethod
    def decode(cls, blob: bytes) -> CommitRecord:
        """Inverse of :meth:`encode`; the record keeps ``blob``, so it is never encoded again."""
        data = orjson.loads(blob if blob[:1] == b"{" else zlib.decompress(blob))
        data["meta"] = TableMeta(**data["meta"])
        record = cls(**data)
        record._blob = blob
        return record


def replay(previous: CommitRecord, entry: bytes, discard_previous: bool = False,
           states_only: bool = False) -> CommitRecord:
    """The commit after ``previous`` from its log :meth:`~CommitRecord.entry` (engines are pure and
    seeded). ``discard_previous``: take over ``previous``'s engine (unusable afterwards) instead of
    copying it; ``states_only``: the same, ``previous`` keeping its state as JSON."""
    data = orjson.loads(entry)
    if data["seq"] != previous.seq + 1:
        raise LookupError(f"log entry {data['seq']} does not follow commit {previous.seq}")
    if states_only:
        game = previous.hand_over_engine()
    elif discard_previous and previous._engine is not None:
        game, previous._engine = previous._engine, None
    else:
        game = previous.game()
    game.apply(data["actor"], data["action"])
    return CommitRecord(data["seq"], data["at"], previous.meta, None, data["events"],
                        data["deadlines"], data["actor"], data["action"], game)


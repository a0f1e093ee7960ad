"""Each commit's TableUpdates, made once per process and shared by every call that sends one.

A commit reaches a process's callers many times: the actor's Act reply, the
actor's own stream, every other seat's stream, every spectator. What they
send differs only in the view, so the parts every update shares (events,
deadlines, time, and the public half of every view) are encoded once per
commit and each seat's update once per (commit, seat). The views still come
from the engine only (``view_json``: its public and its seat's half, the same
JSON as ``view(seat)``), and a seat's update is only ever handed to a caller
of that seat.

Updates leave a process as wire bytes: each (commit, seat) update is
serialised once, and each service's response wraps those bytes
(:func:`field_bytes`) instead of copying the update into a new message that
gRPC would serialise again, once per stream. The servers send bytes as they
are (shared/rpc/interceptors.py).
"""

from __future__ import annotations

from collections import OrderedDict

from shared.api.stammtisch.v1 import common_pb2
from shared.games.record import dumps
from shared.rpc.times import timestamp
from shared.tables.clocks import shown_deadlines
from shared.tables.records import CommitRecord

SPECTATOR = -1
#: The seat of a deadline that is the whole table's (a round time limit).
WHOLE_TABLE = -1
#: Commits whose updates a process keeps: the streams of a commit ask for it within moments,
#: and one that asks later builds its update again from the record (which keeps its engine).
#: Kept small because every cached commit holds its engine's objects, which the garbage
#: collector visits for as long as they live (services/host/heap.py).
CACHED_COMMITS = 256


def _varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def field_bytes(number: int, payload: bytes) -> bytes:
    """The wire form of a message whose only set field, ``number``, holds the serialised
    message ``payload`` (protobuf's length-delimited encoding)."""
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


class CommitUpdates:
    """One commit as each seat sees it; built lazily, seat by seat, at most once each.

    The parts every receiver shares are serialised once; a seat's update is those bytes
    followed by its own view and seat (protobuf's wire format merges concatenated messages).
    """

    def __init__(self, record: CommitRecord) -> None:
        self.record = record
        self._shared: bytes | None = None
        self._public_view: bytes | None = None
        self._by_seat: dict[int, bytes] = {}

    def _base(self) -> bytes:
        """Everything but the view and the seat, serialised: the same for every receiver."""
        if self._shared is None:
            record = self.record
            self._shared = common_pb2.TableUpdate(
                table_id=record.meta.table_id, seq=record.seq,
                events=[common_pb2.Event(type=str(e.get("type", "")), data_json=dumps(e).decode())
                        for e in record.events],
                committed_at=timestamp(record.at),
                deadlines=[common_pb2.Deadline(seat=int(k) if k.isdigit() else WHOLE_TABLE,
                                               expires_at=timestamp(at))
                           for k, at in sorted(shown_deadlines(record.deadlines).items())],
            ).SerializeToString()
        return self._shared

    def wire(self, seat: int | None) -> bytes:
        """The serialised TableUpdate for ``seat`` (None: a spectator), once per (commit, seat)."""
        key = SPECTATOR if seat is None else seat
        wire = self._by_seat.get(key)
        if wire is None:
            engine = self.record.engine()
            if self._public_view is None:
                self._public_view = dumps(engine.public_view())
            view = engine.view_json(seat, self._public_view)
            own = common_pb2.TableUpdate(view_json=view.decode(), seat=key)
            wire = self._by_seat[key] = self._base() + own.SerializeToString()
        return wire

    def without_view(self, seat: int | None) -> bytes:
        """:meth:`wire` with ``view_json`` left empty (a catch-up batch's update before its
        last, for a stream that asked for the last view only): no view is made."""
        key = SPECTATOR if seat is None else seat
        return self._base() + common_pb2.TableUpdate(seat=key).SerializeToString()


class UpdateCache:
    """The CommitUpdates of the newest commits this process handled, by (table, seq)."""

    def __init__(self, size: int = CACHED_COMMITS) -> None:
        self.size = size
        self._commits: OrderedDict[tuple[str, int], CommitUpdates] = OrderedDict()

    def of(self, record: CommitRecord) -> CommitUpdates:
        """The updates of ``record``."""
        key = (record.meta.table_id, record.seq)
        commit = self._commits.get(key)
        if commit is None:
            commit = self._commits[key] = CommitUpdates(record)
            if len(self._commits) > self.size:
                self._commits.popitem(last=False)
        return commit

"""Each commit's TableUpdates, made once per process and shared by every call that sends one.

A commit reaches a process's callers many times: the actor's Act reply, the
actor's own stream, every other seat's stream, every spectator. What they
send differs only in the view, so the parts every update shares (events,
deadlines, time) are encoded once per commit and each seat's update once per
(commit, seat). The views still come from the engine's ``view(seat)`` only,
and a seat's update is only ever handed to a caller of that seat.
"""

from __future__ import annotations

from collections import OrderedDict

from google.protobuf.timestamp_pb2 import Timestamp

from shared.api.stammtisch.v1 import common_pb2
from shared.games.base import Game
from shared.tables.clocks import shown_deadlines
from shared.tables.records import CommitRecord, dumps

SPECTATOR = -1
#: The seat of a deadline that is the whole table's (a round time limit).
WHOLE_TABLE = -1
#: Commits whose updates a process keeps: enough for every live table's newest few.
CACHED_COMMITS = 2048


def _timestamp(at: float) -> Timestamp:
    stamp = Timestamp()
    stamp.FromNanoseconds(int(at * 1e9))
    return stamp


class CommitUpdates:
    """One commit as each seat sees it; built lazily, seat by seat, at most once each."""

    def __init__(self, record: CommitRecord, game: Game | None = None) -> None:
        self.record = record
        self._game = game
        self._shared: common_pb2.TableUpdate | None = None
        self._by_seat: dict[int, common_pb2.TableUpdate] = {}

    def _base(self) -> common_pb2.TableUpdate:
        """Everything but the view and the seat: the same for every receiver."""
        if self._shared is None:
            record = self.record
            self._shared = common_pb2.TableUpdate(
                table_id=record.meta.table_id, seq=record.seq,
                events=[common_pb2.Event(type=str(e.get("type", "")), data_json=dumps(e).decode())
                        for e in record.events],
                committed_at=_timestamp(record.at),
                deadlines=[common_pb2.Deadline(seat=int(k) if k.isdigit() else WHOLE_TABLE,
                                               expires_at=_timestamp(at))
                           for k, at in sorted(shown_deadlines(record.deadlines).items())])
        return self._shared

    def update(self, seat: int | None) -> common_pb2.TableUpdate:
        """The update for ``seat`` (None: a spectator). Shared: callers must not change it."""
        key = SPECTATOR if seat is None else seat
        update = self._by_seat.get(key)
        if update is None:
            if self._game is None:
                self._game = self.record.engine()
            update = common_pb2.TableUpdate()
            update.CopyFrom(self._base())
            update.view_json = dumps(self._game.view(seat)).decode()
            update.seat = key
            self._by_seat[key] = update
        return update


class UpdateCache:
    """The CommitUpdates of the newest commits this process handled, by (table, seq)."""

    def __init__(self, size: int = CACHED_COMMITS) -> None:
        self.size = size
        self._commits: OrderedDict[tuple[str, int], CommitUpdates] = OrderedDict()

    def of(self, record: CommitRecord, game: Game | None = None) -> CommitUpdates:
        """The updates of ``record``; ``game`` (the engine at that commit, if at hand) spares a restore."""
        key = (record.meta.table_id, record.seq)
        commit = self._commits.get(key)
        if commit is None:
            commit = self._commits[key] = CommitUpdates(record, game)
            if len(self._commits) > self.size:
                self._commits.popitem(last=False)
        return commit

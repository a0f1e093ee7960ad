"""What each history entry tells a watcher: built once per entry, shared by every watcher.

A watcher replays the history from its first entry, so each entry must describe
the tournament as it was then, not as it is now: its status, the rounds seated
and finished so far, the players registered and withdrawn so far and the
standings of the games recorded so far. :class:`Replay` walks the entries in
order and keeps, per entry, only the counts that say how far the tournament
was (a :class:`Moment`); an entry's response is built from the newest document
and results cut back to that moment, once, and every watcher gets the same
message (Nakama's "marshal once"). Only a seating's ``your_seat`` is per watcher.
"""

from __future__ import annotations

import dataclasses
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

from services.tournament import convert
from services.tournament.core.standings import GameResult, ResultKey, game_points_of
from services.tournament.model import STATUS_AFTER, Entry, Status, Tournament
from shared.api.stammtisch.v1 import tournament_pb2

#: Changes after which a watcher gets the standings.
WITH_STANDINGS = ("game_finished", "round_finished", "finished", "cancelled")
#: Changes that end the history.
LAST = ("finished", "cancelled")
#: Built responses kept per tournament (live watchers share the newest; a late one rebuilds).
KEPT = 256
#: An entry's shared response, and (a seating) each seated player's (table index, seat).
Built = tuple[tournament_pb2.WatchTournamentResponse, dict[str, tuple[int, int]]]


@dataclass(frozen=True)
class Moment:
    """How far the tournament was right after one history entry (counts into the replay's
    ordered lists, so a moment costs the same however long the tournament)."""

    seq: int
    entry: Entry
    status: Status
    #: Rounds announced (seated entries) so far.
    seated: int
    #: Rounds finished so far (rounds finish in order).
    finished: int
    #: Entries in the replay's lists so far: cut rounds, registrations, withdrawals, results.
    cut: int
    registered: int
    withdrawn: int
    results: int


class Replay:
    """The history of one tournament as far as read, each entry with its moment and (once
    asked for) its shared response."""

    def __init__(self) -> None:
        self.moments: list[Moment] = []
        self._status = Status.REGISTRATION
        self._seated = self._finished = 0
        self._cut: list[int] = []
        self._registered: list[str] = []
        self._withdrawn: list[str] = []
        self._results: list[ResultKey] = []
        #: The newest document and results (read after the newest entries).
        self._tournament: Tournament | None = None
        self._by_key: dict[ResultKey, GameResult] = {}
        self._built: OrderedDict[tuple[int, bool], Built] = OrderedDict()

    def add(self, entries: Sequence[tuple[int, Entry]], tournament: Tournament,
            results: Sequence[GameResult]) -> None:
        """Entries read after the last ones, with the document and results read after them."""
        for seq, entry in entries:
            change = str(entry["change"])
            self._status = STATUS_AFTER.get(change, self._status)
            if change == "seated":
                self._seated = int(entry["round"])
            elif change == "round_finished":
                self._finished = int(entry["round"])
            elif change == "time_up":
                self._cut.append(int(entry["round"]))
            elif change == "registered":
                self._registered.append(str(entry["player_id"]))
            elif change in ("withdrawn", "removed"):
                self._withdrawn.append(str(entry["player_id"]))
            elif change == "game_finished":
                self._results.append((int(entry["round"]), int(entry["table"]), int(entry["game"])))
            self.moments.append(Moment(seq, entry, self._status, self._seated, self._finished, len(self._cut),
                                       len(self._registered), len(self._withdrawn), len(self._results)))
        self._tournament = tournament
        self._by_key = {(r.round, r.table, r.game): r for r in results}

    def response(self, index: int, watcher: str,
                 lean: bool = False) -> tournament_pb2.WatchTournamentResponse:
        """The response to entry ``self.moments[index]`` for ``watcher``: the shared message, or a
        copy of it with the watcher's seat for a seating that seats them. ``lean``: without the
        standings of a game_finished entry and the tables of a seated one (built only if asked)."""
        moment = self.moments[index]
        shared, seats = self._shared(moment, lean)
        place = seats.get(watcher)
        if place is None:
            return shared
        mine = tournament_pb2.WatchTournamentResponse()
        mine.CopyFrom(shared)
        tournament = self._now()
        mine.your_seat.CopyFrom(tournament_pb2.YourSeat(
            round=moment.seated, table=place[0] + 1, table_id=tournament.table_id(moment.seated, place[0]),
            seat=place[1], games=tournament.settings.games_per_round))
        return mine

    def _now(self) -> Tournament:
        assert self._tournament is not None  # set with the first entries
        return self._tournament

    def _shared(self, moment: Moment, lean: bool) -> Built:
        key = (moment.seq, lean)
        built = self._built.pop(key, None)
        if built is None:
            built = self._build(moment, lean)
        self._built[key] = built
        while len(self._built) > KEPT:
            self._built.popitem(last=False)
        return built

    def _build(self, moment: Moment, lean: bool) -> Built:
        entry, change = moment.entry, str(moment.entry["change"])
        response = tournament_pb2.WatchTournamentResponse(
            seq=moment.seq, change=change, player_id=str(entry.get("player_id", "")),
            status=convert.status_proto(moment.status), round_number=int(entry.get("round", 0)))
        seats: dict[str, tuple[int, int]] = {}
        if change not in ("seated", "game_finished", *WITH_STANDINGS):
            return response, seats
        if change == "seated":
            tables = self._now().rounds[moment.seated - 1].tables
            seats = {player: (table, seat) for table, players in enumerate(tables)
                     for seat, player in enumerate(players) if player}
        if lean and change in ("seated", "game_finished"):
            return response, seats
        then = self._then(moment)
        recorded = [self._by_key[key] for key in self._results[:moment.results] if key in self._by_key]
        if change == "seated":
            response.round.CopyFrom(convert.round_proto(then, moment.seated, recorded))
        if change == "game_finished":
            result = self._by_key.get(self._results[moment.results - 1])
            if result is not None:
                response.result.CopyFrom(convert.result_proto(then, result, *_points(then, result, recorded)))
        if change in WITH_STANDINGS:
            response.standings.extend(convert.standings_proto(then, recorded))
        return response, seats

    def _then(self, moment: Moment) -> Tournament:
        """The newest document cut back to ``moment``: its status, the players registered then
        (withdrawn only if by then), the rounds announced then (finished and cut as then)."""
        now = self._now()
        registered = set(self._registered[:moment.registered])
        withdrawn = set(self._withdrawn[:moment.withdrawn])
        cut = set(self._cut[:moment.cut])
        return dataclasses.replace(
            now, status=moment.status,
            players=[player if player.player_id in withdrawn else dataclasses.replace(player, last_round=None)
                     for player in now.players if player.player_id in registered],
            rounds=[dataclasses.replace(round_, finished=round_.number <= moment.finished,
                                        cut=round_.number in cut)
                    for round_ in now.rounds[:moment.seated]])


def _points(tournament: Tournament, result: GameResult,
            recorded: Sequence[GameResult]) -> tuple[list[object], bool]:
    """The points ``result`` gave each seat as far as known, and whether they are provisional:
    with duplicate deals they compare with the same deal at the other tables of its size, so
    they are final only once every such table has reported."""
    if not tournament.settings.duplicate:
        return list(game_points_of([result], False)[(result.round, result.table, result.game)]), False
    size = len(result.seats)
    deal = [r for r in recorded if (r.round, r.game, len(r.seats)) == (result.round, result.game, size)]
    tables = sum(1 for seats in tournament.rounds[result.round - 1].tables
                 if len(seats) == size and any(seats))
    points = game_points_of(deal, True)[(result.round, result.table, result.game)]
    return list(points), len(deal) < tables

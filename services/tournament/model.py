"""A tournament as one document: its settings, players, seated rounds and status.

Every change is a method that checks and mutates in place and returns the
history entry it makes (a dict with at least "change"; empty for the one
silent change, a round seated but not yet announced), raising a clean
ServiceError to refuse. The store runs these methods by compare-and-set on the
newest copy and appends the entry to the tournament's history in the same
atomic step, so a change and its history entry never come apart.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any

import grpc

from services.tournament.core.rounds import FirstSeating, Format, Kind, Player, finished
from services.tournament.core.seating import SeatedTable, forced_pairs, pair
from services.tournament.core.standings import DEFAULT_TIE_BREAKS
from shared.rpc.errors import ServiceError, precondition

#: History entry made by a change.
Entry = dict[str, Any]


class Status(StrEnum):
    """Where a tournament is in its life."""

    REGISTRATION = "registration"
    CHECK_IN = "check_in"
    RUNNING = "running"
    PAUSED = "paused"
    FINISHED = "finished"
    CANCELLED = "cancelled"


#: Statuses in which the director still has work.
ACTIVE = (Status.REGISTRATION, Status.CHECK_IN, Status.RUNNING, Status.PAUSED)
#: The status after a history entry of these changes (every other change keeps the status).
STATUS_AFTER = {"created": Status.REGISTRATION, "check_in_opened": Status.CHECK_IN,
                "started": Status.RUNNING, "paused": Status.PAUSED, "resumed": Status.RUNNING,
                "finished": Status.FINISHED, "cancelled": Status.CANCELLED}


@dataclass
class Settings:
    """What the organizer chose (checked by the servicer before a tournament exists)."""

    name: str
    game: str
    kind: Kind
    options: dict[str, Any]
    turn_seconds: float
    capacity: int
    rounds: int
    games_per_round: int
    table_size: int
    min_size: int
    max_size: int
    start_at: float = 0.0
    round_seconds: float = 0.0
    first_seating: FirstSeating = FirstSeating.RANDOM
    keep: int = 1
    duplicate: bool = False
    late_entry_until_round: int = 0
    check_in_seconds: float = 0.0
    no_show_bot: bool = False
    #: Rounds after the first wait for the organizer's StartNextRound.
    manual_rounds: bool = False
    #: Standings tie-breaks after points, in order (core.standings.TIE_BREAKS).
    tie_breaks: list[str] = field(default_factory=lambda: list(DEFAULT_TIE_BREAKS))


@dataclass
class Entrant:
    """A registered player."""

    player_id: str
    name: str
    rating: float
    order: int
    first_round: int = 1
    #: The last round the player is seated in (None: still in).
    last_round: int | None = None
    checked_in: bool = False
    #: A bot plays this entry's seats (a no-show replaced by a bot).
    bot: bool = False


@dataclass
class Round:
    """A seated round: player id per seat per table ("" for a bot)."""

    number: int
    tables: list[list[str]]
    started_at: float
    finished: bool = False
    #: Past the time limit: running games are finished by bots, no new game starts.
    cut: bool = False
    #: Its ``seated`` entry is written: every table's first game exists (a round seated by an
    #: older version, before this field, was announced at once).
    announced: bool = True
    #: Forbidden pairs (a < b) no seating of the round could keep apart.
    forced: list[list[str]] = field(default_factory=list)

    def seated(self) -> list[SeatedTable]:
        """The tables as the core sees them."""
        return [SeatedTable(index, tuple(seats)) for index, seats in enumerate(self.tables)]


@dataclass
class Tournament:
    """The document; ``version`` is its compare-and-set version."""

    tournament_id: str
    organizer_id: str
    settings: Settings
    created_at: float
    status: Status = Status.REGISTRATION
    players: list[Entrant] = field(default_factory=list)
    rounds: list[Round] = field(default_factory=list)
    check_in_until: float = 0.0
    #: Never shown to clients: the seeds of the games derive from it, so nobody can compute
    #: a tournament's deals in advance (each game's seed is revealed after it, as at any table).
    deal_secret: str = ""
    #: Pairs [a, b] (a < b) who must not meet at a table (the organizer's SetForbiddenPairs).
    forbidden_pairs: list[list[str]] = field(default_factory=list)
    #: With manual rounds: the highest round the organizer let start (StartNextRound).
    released_round: int = 1
    #: Its players were told it starts soon (notify.py: once per tournament).
    reminded: bool = False
    version: int = 0

    # -- storage --------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """JSON-compatible document."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Tournament:
        """Inverse of :meth:`to_dict`."""
        data = dict(data)
        settings = dict(data["settings"])
        settings["kind"] = Kind(settings["kind"])
        settings["first_seating"] = FirstSeating(settings["first_seating"])
        data["settings"] = Settings(**settings)
        data["status"] = Status(data["status"])
        data["players"] = [Entrant(**entry) for entry in data["players"]]
        data["rounds"] = [Round(**entry) for entry in data["rounds"]]
        return cls(**data)

    # -- what the core needs ------------------------------------------------------------------

    @property
    def seed(self) -> int:
        """The tournament's own seed (round-1 shuffle): from its secret, so every director agrees."""
        return int.from_bytes(hashlib.sha256(f"{self.deal_secret}:{self.tournament_id}".encode())
                              .digest()[:8], "big")

    def game_seed(self, round_no: int, table: int, game: int) -> int:
        """The seed of one game; with duplicate deals the same at every table of the round."""
        where = f"{round_no}:{game}" if self.settings.duplicate else f"{round_no}:{table}:{game}"
        digest = hashlib.sha256(f"{self.deal_secret}:{self.tournament_id}:{where}".encode()).digest()
        return int.from_bytes(digest[:8], "big") >> 2

    def format(self) -> Format:
        """The core's view of the settings."""
        s = self.settings
        return Format(s.kind, s.rounds, s.games_per_round, s.min_size, s.max_size, s.table_size,
                      self.seed, s.first_seating, s.keep, s.duplicate, tuple(s.tie_breaks),
                      frozenset((a, b) for a, b in self.forbidden_pairs))

    @property
    def awaiting_next_round(self) -> bool:
        """With manual rounds: the last round is done, another is due, and the organizer has
        not started it yet."""
        current = self.current
        return (self.settings.manual_rounds and self.status in (Status.RUNNING, Status.PAUSED)
                and current is not None and current.finished and self.released_round <= current.number
                and not finished(self.format(), [r.seated() for r in self.rounds]))

    def core_players(self) -> list[Player]:
        """The entrants the core seats and ranks (bot entries are seated as people would be)."""
        return [Player(p.player_id, p.rating, p.order, p.first_round, p.last_round) for p in self.players]

    def entrant(self, player_id: str) -> Entrant | None:
        """A registered player, if registered."""
        return next((p for p in self.players if p.player_id == player_id), None)

    @property
    def current(self) -> Round | None:
        """The last seated round."""
        return self.rounds[-1] if self.rounds else None

    def table_id(self, round_no: int, table: int) -> str:
        """The lobby table of (tournament, round, table): the same for every director."""
        return f"{self.tournament_id}-r{round_no}-t{table + 1}"

    def seat_of(self, player_id: str, round_no: int) -> tuple[int, int] | None:
        """(table index, seat) of a player in a seated round."""
        for index, seats in enumerate(self.rounds[round_no - 1].tables):
            if player_id in seats:
                return index, seats.index(player_id)
        return None

    # -- changes by players and the organizer ----------------------------------------------------

    def check_organizer(self, player_id: str) -> None:
        """PERMISSION_DENIED unless the caller created this tournament."""
        if player_id != self.organizer_id:
            raise ServiceError(grpc.StatusCode.PERMISSION_DENIED, "only the organizer may do that")

    def _next_unseated_round(self) -> int:
        return len(self.rounds) + 1

    def register(self, player_id: str, name: str, rating: float) -> Entry:
        """Enter; late (series, until the configured round is seated) from the next unseated round."""
        outcome = self.register_many([(player_id, name, rating)])[0]
        if isinstance(outcome, ServiceError):
            raise outcome
        return outcome

    def register_many(self, players: list[tuple[str, str, float]]) -> list[Entry | ServiceError]:
        """:meth:`register` each (player id, name, rating) in order: its entry, or its refusal. In
        time linear in the players, however many register at once."""
        known = {p.player_id for p in self.players}
        active = sum(1 for p in self.players if p.last_round is None)
        first = 1
        closed = False
        if self.status not in (Status.REGISTRATION, Status.CHECK_IN):
            first = self._next_unseated_round()
            closed = (self.status not in (Status.RUNNING, Status.PAUSED) or self.settings.kind != Kind.SERIES
                      or first > self.settings.late_entry_until_round)
        outcomes: list[Entry | ServiceError] = []
        for player_id, name, rating in players:
            if player_id in known:
                outcomes.append(precondition("you are registered for this tournament already"))
            elif active >= self.settings.capacity:
                outcomes.append(precondition("the tournament is full"))
            elif closed:
                outcomes.append(precondition("registration is closed"))
            else:
                self.players.append(Entrant(player_id, name, rating, len(self.players), first,
                                            checked_in=self.status != Status.CHECK_IN))
                known.add(player_id)
                active += 1
                outcomes.append({"change": "registered", "player_id": player_id})
        return outcomes

    def withdraw(self, player_id: str, change: str = "withdrawn") -> Entry:
        """Leave: before the start off the list; later seated no more after the current round."""
        entrant = self.entrant(player_id)
        if entrant is None or entrant.last_round is not None:
            raise precondition("that player is not in this tournament")
        if self.status in (Status.FINISHED, Status.CANCELLED):
            raise precondition("the tournament is over")
        if not self.rounds and self.status == Status.REGISTRATION:
            self.players.remove(entrant)
        else:
            entrant.last_round = len(self.rounds)
        return {"change": change, "player_id": player_id}

    def check_in(self, player_id: str) -> Entry:
        """Confirm presence during the check-in window."""
        entrant = self.entrant(player_id)
        if entrant is None or entrant.last_round is not None:
            raise precondition("you are not registered for this tournament")
        if self.status != Status.CHECK_IN:
            raise precondition("check-in is not open")
        entrant.checked_in = True
        return {"change": "checked_in", "player_id": player_id}

    def start(self, now: float) -> Entry:
        """Registration ends: check-in opens, or the tournament runs at once."""
        if self.status != Status.REGISTRATION:
            raise precondition("the tournament has started already")
        if not self.players:
            raise precondition("nobody is registered")
        if self.settings.check_in_seconds > 0:
            self.status = Status.CHECK_IN
            self.check_in_until = now + self.settings.check_in_seconds
            for entrant in self.players:
                entrant.checked_in = False
            return {"change": "check_in_opened"}
        self.status = Status.RUNNING
        return {"change": "started"}

    def close_check_in(self) -> Entry:
        """The window ended: no-shows are dropped or become bot entries."""
        if self.status != Status.CHECK_IN:
            raise precondition("check-in is not open")
        for entrant in list(self.players):
            if not entrant.checked_in:
                if self.settings.no_show_bot:
                    entrant.bot = True
                else:
                    self.players.remove(entrant)
        self.status = Status.RUNNING
        return {"change": "started"}

    def pause(self) -> Entry:
        """No new round until resumed."""
        if self.status != Status.RUNNING:
            raise precondition("only a running tournament can be paused")
        self.status = Status.PAUSED
        return {"change": "paused"}

    def resume(self) -> Entry:
        """Seat rounds again."""
        if self.status != Status.PAUSED:
            raise precondition("the tournament is not paused")
        self.status = Status.RUNNING
        return {"change": "resumed"}

    def remind(self) -> Entry:
        """Registration: the players are told it starts soon (once)."""
        if self.status != Status.REGISTRATION or self.reminded:
            raise precondition("the players were told already, or it has started")
        self.reminded = True
        return {"change": "starting_soon"}

    def start_next_round(self) -> Entry:
        """Manual rounds: let the director seat the next round."""
        if not self.settings.manual_rounds:
            raise precondition("this tournament starts its rounds by itself (no manual_rounds)")
        if not self.awaiting_next_round:
            raise precondition("no round is waiting to start: the current one is still playing, "
                               "or the tournament is not running")
        self.released_round = len(self.rounds) + 1
        return {"change": "next_round_started", "round": self.released_round}

    def set_forbidden_pairs(self, pairs: list[tuple[str, str]]) -> Entry:
        """Replace the pairs who must not meet (registered players, each pair once)."""
        if self.status in (Status.FINISHED, Status.CANCELLED):
            raise precondition("the tournament is over")
        for a, b in pairs:
            for player in (a, b):
                if self.entrant(player) is None:
                    raise precondition(f"player {player!r} is not registered for this tournament")
        self.forbidden_pairs = [list(p) for p in sorted({pair(a, b) for a, b in pairs})]
        return {"change": "forbidden_pairs_set"}

    def cancel(self) -> Entry:
        """Stop for good."""
        if self.status in (Status.FINISHED, Status.CANCELLED):
            raise precondition("the tournament is over")
        self.status = Status.CANCELLED
        return {"change": "cancelled"}

    # -- changes by the director -------------------------------------------------------------

    def seat(self, number: int, tables: list[SeatedTable], now: float) -> Entry:
        """Store round ``number``'s seating, silently (refused if it is not the next round): the
        director deals every table's first game, then :meth:`announce_round` tells the players."""
        if number != len(self.rounds) + 1 or self.status != Status.RUNNING:
            raise precondition(f"round {number} is not the next round to seat")
        bots = {p.player_id for p in self.players if p.bot}
        forbidden = self.format().forbidden if self.forbidden_pairs else frozenset()
        forced = forced_pairs([t.players for t in tables], forbidden) if forbidden else []
        self.rounds.append(Round(number, [["" if p in bots else p for p in t.seats] for t in tables], now,
                                 announced=False, forced=[list(p) for p in forced]))
        return {}

    def announce_round(self, number: int, now: float) -> Entry:
        """Every table of the seated round ``number`` has its game: the seating is news, and the
        round's clock starts."""
        current = self.current
        if current is None or current.number != number or current.announced:
            raise precondition(f"round {number} is not waiting for its announcement")
        current.announced = True
        current.started_at = now
        return {"change": "seated", "round": number}

    def announced_rounds(self) -> list[Round]:
        """The rounds players have been told of (the newest may still be dealing its tables)."""
        return [round_ for round_ in self.rounds if round_.announced]

    def finish_round(self, number: int) -> Entry:
        """Every table of the round is done."""
        current = self.current
        if current is None or current.number != number or current.finished:
            raise precondition(f"round {number} is not the running round")
        current.finished = True
        return {"change": "round_finished", "round": number}

    def cut_round(self, number: int) -> Entry:
        """The round's time is up."""
        current = self.current
        if current is None or current.number != number or current.finished or current.cut:
            raise precondition(f"round {number} is not running on time")
        current.cut = True
        return {"change": "time_up", "round": number}

    def finish(self) -> Entry:
        """The last round is done (or nobody is left to seat)."""
        if self.status not in (Status.RUNNING, Status.PAUSED):
            raise precondition("the tournament is not running")
        self.status = Status.FINISHED
        return {"change": "finished"}

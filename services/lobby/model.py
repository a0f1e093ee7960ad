"""A lobby table as pure data: seats, readiness, the waiting list and the series of games.

Every change is a method that checks the rules of seating and mutates in place,
raising a :mod:`shared.errors` refusal to refuse (the RPC layer picks its status).
The repository runs these methods in a compare-and-set loop on the newest copy,
so any replica can serve any call and two callers racing for a seat cannot both
get it.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any

from shared.errors import BadInput, Refused

#: The bot that stands in for a player who leaves a running game.
STAND_IN_LEVEL = "heuristic"
#: The seat number that means "no seat" (spectators, newcomers without a wish or not seated yet).
NO_SEAT = -1


class Status(StrEnum):
    """Where a table is in its series of games."""

    WAITING = "waiting"
    PLAYING = "playing"
    BETWEEN_GAMES = "between_games"


class Moved(Exception):
    """The table changed under a plan made on an older copy (a game started or ended): plan again."""


@dataclass
class SeatState:
    """One seat. Open: no player, no bot. A bot with a player: it stands in for that player."""

    player_id: str = ""
    name: str = ""
    ready: bool = False
    #: Bot level playing the seat; "" when a person (or nobody) does.
    bot: str = ""

    @property
    def open(self) -> bool:
        """Nobody sits here: anyone may take it."""
        return not self.player_id and not self.bot

    @property
    def person(self) -> bool:
        """A person plays this seat themselves."""
        return bool(self.player_id) and not self.bot

    @property
    def stand_in(self) -> bool:
        """A bot plays for a player who left the running game; the player may reclaim it."""
        return bool(self.player_id) and bool(self.bot)


@dataclass
class Newcomer:
    """A player who joined during a game, seated when it ends."""

    player_id: str
    name: str
    #: The seat they wished for, taken if it is open when the game ends.
    seat: int | None = None


@dataclass
class LobbyTable:
    """A table and its series of games; stored as one JSON document."""

    table_id: str
    game: str
    #: Engine options chosen at creation (turn_seconds is not one of them).
    options: dict[str, Any]
    turn_seconds: float
    seats: list[SeatState]
    created_at: float
    status: Status = Status.WAITING
    #: game_no of the last game started here (the running one included).
    games_played: int = 0
    waiting: list[Newcomer] = field(default_factory=list)
    spectators: list[str] = field(default_factory=list)
    #: Options the next game takes over from the last one (such as the next dealer).
    carry: dict[str, Any] = field(default_factory=dict)
    #: Compare-and-set version of the stored document.
    version: int = 0
    #: Set by a change that leaves nobody at the table: the repository deletes it.
    closed: bool = False
    #: A tournament's table: its director readies the seats and starts every game (with the
    #: tournament's seeds), so its players never get ready themselves.
    tournament_id: str = ""
    #: A private table (services/clubs): not listed, and only its guests sit down.
    private: bool = False
    #: A private table's join code (ClubsService.JoinTableByCode).
    code: str = ""
    #: Who may sit at a private table: its creator, the invited, those who gave its code.
    guests: list[str] = field(default_factory=list)
    #: Seats held for invited players: seat number as text -> [player id, until (unix time)].
    holds: dict[str, list[Any]] = field(default_factory=dict)

    # -- storage ------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """JSON-compatible document."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LobbyTable:
        """Inverse of :meth:`to_dict`."""
        data = dict(data)
        data["seats"] = [SeatState(**seat) for seat in data["seats"]]
        data["waiting"] = [Newcomer(**entry) for entry in data["waiting"]]
        data["status"] = Status(data["status"])
        return cls(**data)

    # -- queries --------------------------------------------------------------------

    def seat_of(self, player_id: str) -> int | None:
        """The seat recorded for a player (played by them or by their stand-in)."""
        for index, seat in enumerate(self.seats):
            if seat.player_id == player_id:
                return index
        return None

    def is_waiting(self, player_id: str) -> bool:
        """Queued for the next game."""
        return any(entry.player_id == player_id for entry in self.waiting)

    def knows(self, player_id: str) -> bool:
        """Seated, queued or watching: may chat here."""
        return (self.seat_of(player_id) is not None or self.is_waiting(player_id)
                or player_id in self.spectators)

    def game_options(self) -> dict[str, Any]:
        """Options of the next game: the table's, updated by what the last game handed on."""
        return {**self.options, **self.carry}

    @property
    def has_open_seat(self) -> bool:
        """Somebody could sit down (now, or for the next game while one runs)."""
        return any(seat.open for seat in self.seats)

    def startable(self) -> bool:
        """No game running, every seat taken and ready, and at least one person playing."""
        return (self.status != Status.PLAYING
                and all(not seat.open and (seat.ready or seat.bot) for seat in self.seats)
                and any(seat.person for seat in self.seats))

    # -- changes by players -----------------------------------------------------------

    def check_seat_number(self, seat: int) -> int:
        """A seat number of this table, else BadInput."""
        if not 0 <= seat < len(self.seats):
            raise BadInput(f"seat must be 0..{len(self.seats) - 1}, got {seat}")
        return seat

    def _check_not_here(self, player_id: str) -> None:
        seat = self.seat_of(player_id)
        if seat is not None:
            raise Refused(f"you already have seat {seat} at this table")
        if self.is_waiting(player_id):
            raise Refused("you are already waiting for the next game at this table")

    def _free_seat_for(self, wish: int | None, holder: str = "") -> int | None:
        """The wished seat if open, else (without a wish) the first open seat; a seat held for
        another player is not open (``holder``'s own held seat comes first)."""
        now = time.time()
        if wish is None:
            wish = self.held_seat(holder, now)
        if wish is not None:
            return wish if self.seats[wish].open and not self._held_for_other(wish, holder, now) else None
        return next((index for index, seat in enumerate(self.seats)
                     if seat.open and not self._held_for_other(index, holder, now)), None)

    # -- private tables, guests and held seats (services/clubs) ---------------------------

    def held_seat(self, player_id: str, now: float) -> int | None:
        """The seat held for the player, if any and not expired."""
        return next((int(seat) for seat, (holder, until) in self.holds.items()
                     if player_id and holder == player_id and until > now), None)

    def held_seats(self, now: float) -> list[int]:
        """The seats held right now."""
        return sorted(int(seat) for seat, (_holder, until) in self.holds.items() if until > now)

    def _held_for_other(self, index: int, player_id: str, now: float) -> bool:
        hold = self.holds.get(str(index))
        return hold is not None and hold[0] != player_id and hold[1] > now

    def admit(self, player_id: str, limit: int = 64) -> None:
        """Let a player sit at this private table (invited, or gave the code)."""
        if player_id not in self.guests:
            if len(self.guests) >= limit:
                raise Refused(f"at most {limit} players may be let in to a table")
            self.guests.append(player_id)

    def hold(self, player_id: str, until: float) -> int:
        """Keep the first open seat for an invited player until ``until``; returns it."""
        self._check_not_tournament("seats every player")
        if self.status == Status.PLAYING:
            raise Refused("a game is running; invite without holding a seat")
        seat = self._free_seat_for(None, player_id)
        if seat is None:
            raise Refused("no open seat to hold")
        self.holds[str(seat)] = [player_id, until]
        return seat

    def release(self, player_id: str, uninvite: bool = False) -> None:
        """Give up the seats held for a player (and its invitation, with ``uninvite``)."""
        self.holds = {seat: hold for seat, hold in self.holds.items() if hold[0] != player_id}
        if uninvite and player_id in self.guests:
            self.guests.remove(player_id)

    def _check_not_tournament(self, what: str) -> None:
        """A tournament's director alone seats its tables and starts their games (with the
        tournament's seeds): a stranger, a bot or a ready click there would change its games."""
        if self.tournament_id:
            raise Refused(f"a table of tournament {self.tournament_id}: its director {what}")

    def join(self, player_id: str, name: str, wish: int | None) -> int | None:
        """Sit down now, or queue for the next game while one runs; returns the seat (None: queued)."""
        if wish is not None:
            self.check_seat_number(wish)
        self._check_not_here(player_id)
        self._check_not_tournament("seats every player; register for the tournament instead")
        if self.private and player_id not in self.guests:
            raise Refused("a private table: sit down by invitation or with its code")
        if self.status == Status.PLAYING:
            if len(self.waiting) >= len(self.seats):
                raise Refused("the waiting list for the next game is full")
            self.waiting.append(Newcomer(player_id, name, wish))
            self._stop_spectating(player_id)
            return None
        seat = self._free_seat_for(wish, player_id)
        if seat is None:
            raise Refused(f"seat {wish} is taken" if wish is not None else "the table is full")
        self.seats[seat] = SeatState(player_id, name)
        self.release(player_id)
        self.holds.pop(str(seat), None)  # expired, or this player's
        self._stop_spectating(player_id)
        return seat

    def spectate(self, player_id: str) -> None:
        """Watch the table without a seat."""
        self._check_not_here(player_id)
        if self.private and player_id not in self.guests:
            raise Refused("a private table: watch it by invitation or with its code")
        if player_id in self.spectators:
            raise Refused("you are already watching this table")
        self.spectators.append(player_id)

    def _stop_spectating(self, player_id: str) -> None:
        if player_id in self.spectators:
            self.spectators.remove(player_id)

    def reclaim(self, player_id: str) -> int:
        """Take one's seat back from the bot that stood in."""
        seat = self.seat_of(player_id)
        if seat is None or not self.seats[seat].stand_in:
            raise Moved
        self.seats[seat].bot = ""
        self.seats[seat].ready = False
        return seat

    def leave(self, player_id: str, planned_game: int | None, stand_in: bool) -> str:
        """Leave the table; returns what the caller was ("seat", "waiting", "spectator"). ``planned_game``
        and ``stand_in`` are what the caller's plan saw; a game started or ended since raises
        :class:`Moved`, so a running game never keeps a seat nobody plays."""
        seat = self.seat_of(player_id)
        if seat is not None:
            if self.seats[seat].stand_in:
                raise Refused("you have left this table; a bot plays your seat until the game ends")
            running = self.games_played if self.status == Status.PLAYING else None
            if running != planned_game and running is not None:
                raise Moved
            if running is not None and stand_in:
                self.seats[seat].bot = STAND_IN_LEVEL
            else:
                self.seats[seat] = SeatState()
            self._close_if_abandoned()
            return "seat"
        if self.is_waiting(player_id):
            self.waiting = [entry for entry in self.waiting if entry.player_id != player_id]
            self._close_if_abandoned()
            return "waiting"
        if player_id in self.spectators:
            self.spectators.remove(player_id)
            return "spectator"
        raise Refused("you are not at this table")

    def set_ready(self, player_id: str, ready: bool) -> int:
        """Mark the caller's own seat (un)ready; returns the seat."""
        seat = self.seat_of(player_id)
        if seat is None or not self.seats[seat].person:
            raise Refused("only players seated at this table may get ready")
        self._check_not_tournament("starts every game, nobody gets ready here")
        if self.status == Status.PLAYING:
            raise Refused("a game is running; get ready for the next one after it ends")
        self.seats[seat].ready = ready
        return seat

    def add_bot(self, player_id: str, level: str, wish: int | None) -> int:
        """Seat a server bot (always ready) in an open seat; only seated players may."""
        self._check_not_tournament("fills its seats, nobody adds bots here")
        if wish is not None:
            self.check_seat_number(wish)
        seat_of_caller = self.seat_of(player_id)
        if seat_of_caller is None or not self.seats[seat_of_caller].person:
            raise Refused("only players seated at this table may add bots")
        if self.status == Status.PLAYING:
            raise Refused("a game is running; add bots between games")
        seat = self._free_seat_for(wish)
        if seat is None:
            raise Refused(f"seat {wish} is taken" if wish is not None else "the table is full")
        self.seats[seat] = SeatState(name=f"Bot ({level})", ready=True, bot=level)
        return seat

    # -- the series of games --------------------------------------------------------------

    def begin_game(self) -> int:
        """Mark the next game as running; returns its game_no."""
        if self.status == Status.PLAYING:
            raise Refused("a game is already running at this table")
        if not self.startable():
            raise Refused("not every seat is taken and ready")
        self.status = Status.PLAYING
        self.games_played += 1
        return self.games_played

    def undo_begin(self, game_no: int) -> None:
        """Roll back :meth:`begin_game` when the game could not be created."""
        if self.status == Status.PLAYING and self.games_played == game_no:
            self.status = Status.BETWEEN_GAMES if game_no > 1 else Status.WAITING
            self.games_played -= 1

    def end_game(self, game_no: int, carry: dict[str, Any]) -> list[int]:
        """The game ended: people un-ready, stand-in seats freed, newcomers seated; returns their seats.
        Raises :class:`Moved` when that game is not the running one (a repeated result)."""
        if self.status != Status.PLAYING or self.games_played != game_no:
            raise Moved
        self.status = Status.BETWEEN_GAMES
        self.carry = carry
        for index, seat in enumerate(self.seats):
            if seat.stand_in:
                self.seats[index] = SeatState()
            elif seat.person:
                seat.ready = False
        seated: list[int] = []
        still_waiting: list[Newcomer] = []
        for entry in self.waiting:
            free = self._free_seat_for(entry.seat)
            if free is None and entry.seat is not None:
                free = self._free_seat_for(None)
            if free is None:
                still_waiting.append(entry)
                continue
            self.seats[free] = SeatState(entry.player_id, entry.name)
            seated.append(free)
        self.waiting = still_waiting
        self._close_if_abandoned()
        return seated

    def _close_if_abandoned(self) -> None:
        """Outside a game, a table nobody sits at or waits for closes."""
        if (self.status != Status.PLAYING and not self.waiting
                and not any(seat.player_id for seat in self.seats)):
            self.closed = True

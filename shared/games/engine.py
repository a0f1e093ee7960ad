"""The base every rules engine is built on: storage, the game's facts, and one action dispatch.

An engine is a :class:`Game` over a state dataclass (a :class:`Record`). The
base gives what was once written four times: ``from_dict``/``to_dict``/``copy``,
``over``, ``winners`` and ``seat_count`` read from the state, the seat count,
option and seed checks at creation, and :meth:`Engine.apply`.

``apply`` follows one order for every game, verify-then-do in the spirit of
pokerkit: the action's shape is checked (INVALID_ACTION) against the table
of moves, then whether the game is running (GAME_OVER), whether the phase takes
the move (WRONG_PHASE) and whether the seat acts now (NOT_YOUR_TURN); only then
the move's handler runs, which checks the rest of the rules before it changes
anything. So the codes keep the precedence of :class:`ErrorCode`, and a
refused action changes nothing.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, Protocol, Self, TypeVar, get_args

from shared.games.base import (
    Event,
    Game,
    check_options,
    check_seat_count,
    require_fields,
)
from shared.games.catalog import GameEntry, entry
from shared.games.errors import ErrorCode, RuleError, SetupError
from shared.games.record import Record, record_json

#: The value of every engine's ``over`` phase.
OVER = "over"
FieldTypes = Mapping[str, type | tuple[type, ...]]


class GameState(Protocol):
    """What the base reads from an engine's state."""

    @property
    def seats(self) -> int:
        """Seats of people at the table."""

    @property
    def phase(self) -> str:
        """The phase (a member of the engine's ``Phase`` StrEnum)."""

    @property
    def round(self) -> int:
        """The round being played."""

    @property
    def winners(self) -> list[int]:
        """Winning seats once over."""

    def to_dict(self) -> dict[str, Any]:
        """The state as JSON data."""


S = TypeVar("S", bound=GameState)


@dataclass(frozen=True)
class Move:
    """One action type of a game: its fields, when it is allowed, and what carries it out.

    ``parse`` refuses bad values with INVALID_ACTION and returns what ``handler``
    receives (without one, the action itself). ``phases`` are the phases that
    take the move (None: every phase of a running game); ``on_turn`` says it is
    only for seats listed by ``to_act``.
    """

    handler: Callable[[Any, int, Any], list[Event]]
    fields: FieldTypes = field(default_factory=dict)
    optional: FieldTypes = field(default_factory=dict)
    parse: Callable[[Any, int, Mapping[str, Any]], Any] | None = None
    phases: frozenset[str] | None = None
    on_turn: bool = True


class Engine(Game, Generic[S]):
    """A game over a state dataclass, declared by ``class X(Engine[XState], game="name")``."""

    #: The game's catalogue entry (name, seats, options, ...).
    entry: ClassVar[GameEntry]
    #: The state dataclass (the ``XState`` of ``Engine[XState]``), to restore stored games.
    state_type: ClassVar[type[Record]]
    #: Action type -> its move.
    moves: ClassVar[Mapping[str, Move]]

    def __init_subclass__(cls, game: str = "", **kwargs: Any) -> None:
        """Take the game's facts from its catalogue entry and the state type from the base."""
        super().__init_subclass__(**kwargs)
        if game:
            cls.entry = entry(game)
            cls.name, cls.min_seats, cls.max_seats = game, cls.entry.min_seats, cls.entry.max_seats
            cls.simultaneous = cls.entry.simultaneous
            cls.state_type = get_args(cls.__dict__["__orig_bases__"][0])[0]

    def __init__(self, state: S) -> None:
        self.state = state

    # -- creation and storage -------------------------------------------------

    @classmethod
    def new(cls, seats: int, options: Mapping[str, Any] | None = None, seed: int = 0,
            setup: Mapping[str, Any] | None = None) -> Self:
        """Check the seat count, options and seed (SetupError), then set up and deal."""
        count = check_seat_count(cls, seats)
        chosen = check_options(options, cls.entry.options)
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise SetupError(f"the seed must be an integer, got {seed!r}")
        game = cls(cls.initial_state(count, chosen, seed, setup))
        game.start()
        return game

    @classmethod
    @abstractmethod
    def initial_state(cls, seats: int, options: dict[str, Any], seed: int,
                      setup: Mapping[str, Any] | None) -> S:
        """The state before the first deal, from checked seats, options (defaults filled in)
        and seed and the explicit setup (SetupError for option values or a bad setup)."""

    def start(self) -> None:
        """Deal the first round, once the state exists (nothing to do by default)."""

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        """Restore a game stored by :meth:`to_dict`."""
        state: Any = cls.state_type.from_dict(data)
        return cls(state)

    def to_dict(self) -> dict[str, Any]:
        """The complete state, hidden cards included (for storage, never for players)."""
        return self.state.to_dict()

    def state_json(self) -> bytes:
        """The state's JSON straight from the records, without a copy in between."""
        state: Any = self.state
        return record_json(state)

    def copy(self) -> Self:
        """An independent copy of the game."""
        state: Any = self.state_type.restore(self.to_dict())
        return type(self)(state)

    # -- queries ----------------------------------------------------------------

    @property
    def seat_count(self) -> int:
        """Seats of people at the table."""
        return self.state.seats

    @property
    def over(self) -> bool:
        """True once the game has ended."""
        return self.state.phase == OVER

    @property
    def current_round(self) -> int:
        """The state's round."""
        return self.state.round

    def winners(self) -> list[int]:
        """Winning seats once over (ties share), else an empty list."""
        return list(self.state.winners)

    # -- actions ----------------------------------------------------------------

    def apply(self, seat: int, action: Mapping[str, Any]) -> list[Event]:
        """Check the action in the codes' precedence order, then carry it out."""
        seat = self.check_seat(seat)
        kind = action.get("type") if isinstance(action, Mapping) else None
        move = self.moves.get(kind) if isinstance(kind, str) else None
        if move is None:
            raise RuleError(ErrorCode.INVALID_ACTION, f"unknown action type {kind!r}")
        require_fields(action, move.fields, move.optional)
        parsed = action if move.parse is None else move.parse(self, seat, action)
        if self.over:
            raise RuleError(ErrorCode.GAME_OVER, "the game is over")
        phase = self.state.phase
        if move.phases is not None and phase not in move.phases:
            raise RuleError(ErrorCode.WRONG_PHASE, f"no {kind} in the {phase} phase")
        if move.on_turn and seat not in self.to_act():
            raise RuleError(ErrorCode.NOT_YOUR_TURN, f"seat {seat} does not act now")
        return move.handler(self, seat, parsed)


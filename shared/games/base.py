"""The uniform interface every rules engine implements.

A game is created from a seat count, options, a seed and an optional explicit
setup; it is driven only through :meth:`Game.apply`. Everything is pure and
synchronous so that services can store, replay and test it freely.

Conventions shared by all engines:

* An *action* is a plain dict: ``{"type": "play", "card": "R5"}``. The seat is
  passed separately and never trusted from the dict. Unknown types, missing or
  extra fields raise ``INVALID_ACTION``.
* ``apply`` returns *events*: plain JSON-able dicts with a ``"type"`` key that
  hold **public facts only** (what every seat and spectator may know). Private
  information reaches a player only through :meth:`Game.view`.
* ``view(seat)`` is the one function that builds player-facing data;
  ``view(None)`` is the spectators' picture. Each engine writes it in two
  halves, what everyone sees (``public_view``) and what depends on the viewer
  (``seat_view``), so that a commit's public half is made and encoded once
  for all of its receivers (``view_json``).
* All randomness comes from the game's seed through :func:`derived_rng`, so a
  game is reproducible from (seats, options, seed, setup, actions).
* ``to_dict``/``from_dict`` round-trip exactly (JSON-compatible values only), and
  ``copy()`` is an independent game.

The engines implement it on :class:`shared.games.engine.Engine`; the facts about
each game (seats, options, ...) are in :mod:`shared.games.catalog`.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

from shared.games.catalog import Option
from shared.games.errors import ErrorCode, RuleError, SetupError
from shared.games.record import dumps

Action = dict[str, Any]
Event = dict[str, Any]
View = dict[str, Any]


def derived_rng(seed: int, *labels: object) -> random.Random:
    """A generator fixed by the game seed and labels (round, purpose, counter).

    Deriving instead of storing a generator keeps serialised state small and
    makes every random choice reproducible on its own.
    """
    return random.Random(":".join([str(seed), *map(str, labels)]))


def require_fields(action: Mapping[str, Any], required: Mapping[str, type | tuple[type, ...]],
                   optional: Mapping[str, type | tuple[type, ...]] | None = None) -> None:
    """Refuse with INVALID_ACTION unless the action has exactly these typed fields."""
    optional = optional or {}
    extra = set(action) - {"type"} - set(required) - set(optional)
    if extra:
        raise RuleError(ErrorCode.INVALID_ACTION, f"unexpected field(s): {', '.join(sorted(extra))}")
    for name in required:
        if name not in action:
            raise RuleError(ErrorCode.INVALID_ACTION, f"missing field '{name}'")
    for name, kind in {**required, **optional}.items():
        if name in action and not _is_kind(action[name], kind):
            raise RuleError(ErrorCode.INVALID_ACTION, f"field '{name}' has the wrong type")


def _is_kind(value: Any, kind: type | tuple[type, ...]) -> bool:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if isinstance(value, bool) and bool not in kinds:
        return False
    return isinstance(value, kinds)


class Game(ABC):
    """One running game of a game in the catalogue."""

    #: The game's facts, copied from its catalogue entry (:mod:`shared.games.catalog`):
    #: the name as in scenarios, the seat range, and whether every seat may act at any
    #: time (no turn order).
    name: ClassVar[str]
    min_seats: ClassVar[int]
    max_seats: ClassVar[int]
    simultaneous: ClassVar[bool] = False

    @classmethod
    @abstractmethod
    def new(cls, seats: int, options: Mapping[str, Any] | None = None, seed: int = 0,
            setup: Mapping[str, Any] | None = None) -> Game:
        """Create and deal a game; raise SetupError for bad seats/options/setup."""

    @classmethod
    @abstractmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Game:
        """Restore a game stored by :meth:`to_dict`."""

    @abstractmethod
    def to_dict(self) -> dict[str, Any]:
        """The complete state as JSON-compatible data."""

    @abstractmethod
    def state_json(self) -> bytes:
        """:meth:`to_dict` as compact JSON (int keys as strings), the same bytes without the
        copy: what a commit stores."""

    @abstractmethod
    def copy(self) -> Game:
        """An independent copy: playing on either changes nothing in the other."""

    @abstractmethod
    def apply(self, seat: int, action: Mapping[str, Any]) -> list[Event]:
        """Apply one action of ``seat``; return public events or raise RuleError."""

    @abstractmethod
    def legal_actions(self, seat: int) -> list[Action]:
        """Every action ``seat`` may take now (empty when it owes nothing)."""

    @abstractmethod
    def to_act(self) -> list[int]:
        """Seats that may act now (the ones a turn clock waits for)."""

    def viewer(self, seat: int | None) -> int | None:
        """The seat a view is for: None for spectators, else a checked seat (RuleError)."""
        return None if seat is None else self.check_seat(seat)

    def view(self, seat: int | None) -> View:
        """What ``seat`` may know (``None``: a spectator). The only player-facing data.

        A fresh JSON-compatible dict with a ``legal`` key (empty for spectators)
        that shares nothing with the state; RuleError for a seat not at the table.
        It is :meth:`public_view` and :meth:`seat_view` together.
        """
        seat = self.viewer(seat)
        return {**self.public_view(), **self.seat_view(seat)}

    def view_json(self, seat: int | None, public_json: bytes) -> bytes:
        """:meth:`view` as compact JSON, from ``public_json`` (the JSON of this state's
        :meth:`public_view`, made once for every receiver of a commit) and this seat's part:
        the same content as ``dumps(view(seat))``, without making the public part again
        (neither half is ever empty: one has ``game``, the other ``seat``)."""
        own = dumps(self.seat_view(self.viewer(seat)))
        return public_json[:-1] + b"," + own[1:]

    @abstractmethod
    def public_view(self) -> View:
        """The part of every view that is the same for every seat and spectator: public
        facts only (the ``game`` among them), a fresh dict whose keys no :meth:`seat_view` has."""

    @abstractmethod
    def seat_view(self, seat: int | None) -> View:
        """The part of ``seat``'s view (an already checked seat, or None for a spectator)
        that depends on who is looking: its ``seat``, its hand, its legal actions."""

    @abstractmethod
    def summary(self) -> dict[str, Any]:
        """The conformance state summary of the game's rules doc (full information)."""

    @property
    @abstractmethod
    def over(self) -> bool:
        """True once the game has ended."""

    @abstractmethod
    def winners(self) -> list[int]:
        """Winning seats once over, else an empty list."""

    @property
    @abstractmethod
    def current_round(self) -> int:
        """The round being played (1 for the first): what an action's ``round`` must name when a
        client sends one, so that nothing meant for a round that ended lands in the next."""

    def time_up(self, round_no: int) -> list[Event]:
        """End round ``round_no`` because its time limit passed (see :meth:`round_limit`);
        nothing happens when that round is no longer running. Games without a limit have none."""
        return []

    def round_limit(self) -> tuple[int, float] | None:
        """The running round and its time limit in seconds, for a server's round clock
        (None: no limit). Asked on every commit, so it reads the state without a view."""
        return None

    def default_action(self, seat: int) -> Action | None:
        """What a turn clock applies when ``seat`` lets its deadline pass.

        Declining (``pass``) where the rules allow it, otherwise the first legal
        action; ``None`` when the seat owes nothing.
        """
        legal = self.legal_actions(seat)
        for action in legal:
            if action == {"type": "pass"}:
                return action
        return legal[0] if legal else None

    def check_seat(self, seat: object) -> int:
        """Refuse seat numbers outside the table with INVALID_ACTION."""
        if not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat < self.seat_count:
            raise RuleError(ErrorCode.INVALID_ACTION, f"no seat {seat!r} at this table")
        return seat

    @property
    @abstractmethod
    def seat_count(self) -> int:
        """Number of seats of people (a position the rules play by themselves is not one)."""


def check_seat_count(cls: type[Game], seats: object) -> int:
    """Refuse seat counts the game does not support with SetupError."""
    if not isinstance(seats, int) or not cls.min_seats <= seats <= cls.max_seats:
        raise SetupError(f"{cls.name} needs {cls.min_seats} to {cls.max_seats} seats, got {seats!r}")
    return seats


def check_options(options: Mapping[str, Any] | None, known: Iterable[Option]) -> dict[str, Any]:
    """Fill option defaults; refuse unknown names or wrongly typed values with SetupError."""
    by_name = {option.name: option for option in known}
    merged = {name: option.default for name, option in by_name.items()}
    for key, value in (options or {}).items():
        option = by_name.get(key)
        if option is None:
            raise SetupError(f"unknown option '{key}'; the options are {', '.join(by_name) or 'none'}")
        kinds = option.types or (() if option.default is None else (type(option.default),))
        if value is not None and kinds and not _is_kind(value, kinds):
            raise SetupError(f"option '{key}' must be {' or '.join(k.__name__ for k in kinds)}")
        if isinstance(value, int | float) and not _in_bounds(value, option):
            raise SetupError(f"option '{key}' must be {_bounds(option)}, got {value!r}")
        merged[key] = value
    return merged


def _in_bounds(value: float, option: Option) -> bool:
    return ((option.minimum is None or value >= option.minimum)
            and (option.maximum is None or value <= option.maximum))


def _bounds(option: Option) -> str:
    if option.maximum is None:
        return f"at least {option.minimum:g}"
    if option.minimum is None:
        return f"at most {option.maximum:g}"
    return f"{option.minimum:g} to {option.maximum:g}"

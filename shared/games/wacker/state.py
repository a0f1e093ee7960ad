"""The complete state of a game of Willi Wacker as plain, JSON-compatible dataclasses."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from shared.games.wacker.cards import beers


@dataclass
class Tray:
    """Beer cards laid together; face up until drunk (then safe and scoring)."""

    id: str
    owner: int
    cards: list[str]
    drunk: bool = False

    @property
    def beers(self) -> int:
        """The beers this tray is worth."""
        return beers(self.cards)

    def public(self) -> dict[str, Any]:
        """The tray as everyone at the table sees it."""
        return {"id": self.id, "owner": self.owner, "cards": list(self.cards)}


@dataclass
class Duel:
    """An exchange of answers started by FLORA or SCHNORRER, one victim at a time.

    ``asked`` owes the next answer; ``last_pruegel`` is who played the latest
    PRUEGEL (None: nobody yet, so the thief would win). For SCHNORRER,
    ``victims`` are the seats still to be robbed after ``victim`` and
    ``picks`` the thief's optional hand indexes (kept from all views).
    """

    kind: str
    thief: int
    victim: int
    asked: int
    last_pruegel: int | None = None
    tray: str | None = None
    victims: list[int] = field(default_factory=list)
    picks: dict[str, int] = field(default_factory=dict)

    def winner(self) -> int:
        """Who wins if the seat asked now declines."""
        return self.thief if self.last_pruegel is None else self.last_pruegel

    def public(self) -> dict[str, Any]:
        """The duel as everyone at the table sees it (picks stay hidden)."""
        return {"kind": self.kind, "thief": self.thief, "victim": self.victim,
                "asked": self.asked, "last_pruegel": self.last_pruegel,
                "tray": self.tray, "victims_left": list(self.victims)}


@dataclass
class WackerState:
    """Everything the engine knows; ``to_dict``/``from_dict`` round-trip it exactly.

    ``phase`` is ``turn`` (the seat on turn plays), ``respond`` (a duel waits for
    ``duel.asked``), ``after_flora`` (the thief may extend ``stolen_tray``) or ``over``.
    """

    seats: int
    seed: int
    options: dict[str, Any]
    setup_rounds: list[dict[str, Any]]
    round: int
    dealer: int
    turn: int
    phase: str
    hands: list[list[str]]
    talon: list[str]
    trays: list[Tray]
    discard: list[str]
    scores: list[int]
    completed_rounds: list[dict[str, Any]] = field(default_factory=list)
    trays_laid: int = 0
    turns: int = 0
    duel: Duel | None = None
    stolen_tray: str | None = None
    winners: list[int] = field(default_factory=list)

    def tray(self, tray_id: str) -> Tray | None:
        """The tray with this id still on the table (face up or drunk), else None."""
        return next((tray for tray in self.trays if tray.id == tray_id), None)

    def face_up(self) -> list[Tray]:
        """Trays that can still be extended, drunk, stolen or smashed."""
        return [tray for tray in self.trays if not tray.drunk]

    def drunk(self) -> list[int]:
        """Beers drunk this round, per seat."""
        totals = [0] * self.seats
        for tray in self.trays:
            if tray.drunk:
                totals[tray.owner] += tray.beers
        return totals

    def to_dict(self) -> dict[str, Any]:
        """JSON-compatible copy of the whole state."""
        data: dict[str, Any] = _copy(vars(self))
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> WackerState:
        """Inverse of :meth:`to_dict`."""
        values = _copy(dict(data))
        values["trays"] = [Tray(**tray) for tray in values["trays"]]
        values["duel"] = Duel(**values["duel"]) if values.get("duel") else None
        return cls(**values)


def _copy(value: Any) -> Any:
    """Deep copy of JSON-like data (trays and duels as dicts), sharing nothing with the source.

    Hand-written because ``dataclasses.asdict`` is far slower, and services store
    the state after every action.
    """
    if isinstance(value, list):
        if value and isinstance(value[0], str | int):  # lists of the state are homogeneous
            return list(value)
        return [_copy(item) for item in value]
    if isinstance(value, dict):
        return {key: _copy(item) for key, item in value.items()}
    if isinstance(value, Tray | Duel):
        return _copy(vars(value))
    return value

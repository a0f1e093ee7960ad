"""The complete state of a game of Willi Wacker as plain, JSON-compatible dataclasses."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from shared.games.record import Record, records
from shared.games.wacker.cards import beers


class Phase(StrEnum):
    """What the table is waiting for (see :class:`WackerState`)."""

    TURN = "turn"
    RESPOND = "respond"
    AFTER_FLORA = "after_flora"
    OVER = "over"


@dataclass
class Tray(Record):
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
class Duel(Record):
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


def duel_or_none(stored: dict[str, Any] | None) -> Duel | None:
    """The duel from its JSON form (None: no duel running)."""
    return Duel.restore(stored) if stored else None


@dataclass
class WackerState(Record):
    """Everything the engine knows; ``to_dict``/``from_dict`` round-trip it exactly.

    ``phase`` is ``turn`` (the seat on turn plays), ``respond`` (a duel waits for
    ``duel.asked``), ``after_flora`` (the thief may extend ``stolen_tray``) or ``over``.
    """

    restorers = {"phase": Phase, "trays": records(Tray), "duel": duel_or_none}

    seats: int
    seed: int
    options: dict[str, Any]
    setup_rounds: list[dict[str, Any]]
    round: int
    dealer: int
    turn: int
    phase: Phase
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

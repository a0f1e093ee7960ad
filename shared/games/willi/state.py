"""The complete state of a Willi game as plain data, and its JSON form.

Everything the engine knows lives here, hidden cards included; what a seat
may see is cut out of it by ``Willi.view`` alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Self

from shared.games.record import Record, records
from shared.games.willi.cards import value

Play = tuple[int, str]
RoundResult = dict[str, list[int]]


class Phase(StrEnum):
    """What the table is waiting for."""

    DISCARD = "discard"
    PLAY = "play"
    CALL = "call"
    EXCHANGE = "exchange"
    OVER = "over"


def table_plays(stored: list[list[Any]]) -> list[Play]:
    """Cards on a table from their JSON form ``[[seat, card], ...]``."""
    return [(seat, card) for seat, card in stored]


@dataclass
class FinishedTrick(Record):
    """A trick of the current round once its winner is known (public)."""

    plays: list[Play]
    winner: int
    caller: int | None
    #: (give, take) when the winner swapped a hand card for a trick card.
    exchange: tuple[str, str] | None = None

    def pile(self) -> list[str]:
        """The cards that count for the winner, after any exchange."""
        give, take = self.exchange or (None, None)
        return [give if card == take and give else card for _, card in self.plays]

    def points(self) -> int:
        """Sum of the pile's values."""
        return sum(value(card) for card in self.pile())

    def stored(self) -> dict[str, Any]:
        """JSON form (the exchange as ``{"give", "take"}``); also the public record in views."""
        give, take = self.exchange or (None, None)
        return {"plays": [[seat, card] for seat, card in self.plays], "winner": self.winner,
                "caller": self.caller,
                "exchange": None if give is None else {"give": give, "take": take}}

    def to_dict(self) -> dict[str, Any]:
        """:meth:`stored` as it is: it is built afresh from plain values already (copying it
        again cost half of a Willi view)."""
        return self.stored()

    @classmethod
    def restore(cls, values: dict[str, Any]) -> Self:
        """Inverse of :meth:`to_dict`."""
        swap = values["exchange"]
        return cls(table_plays(values["plays"]), values["winner"], values["caller"],
                   None if swap is None else (swap["give"], swap["take"]))


@dataclass
class WilliState(Record):
    """One game: setup inputs, the round in progress and the running totals."""

    restorers = {"phase": Phase, "trick": table_plays, "finished": records(FinishedTrick)}

    people: int
    seed: int
    #: Explicit deals from the setup, by round; later rounds come from the seed.
    deals: list[list[list[str]]]
    round: int
    phase: Phase
    #: Four hands; with 3 people hand 3 is the monster's stack, top card first.
    hands: list[list[str]]
    #: Each person's secret discard of this round (hidden from everyone).
    discards: list[str | None]
    #: Seat that leads the current trick.
    leader: int
    #: Cards on the table in play order (kept during the winner's exchange).
    trick: list[Play] = field(default_factory=list)
    caller: int | None = None
    #: The current Meinz window: seats still to be asked, the first is asked now.
    asking: list[int] = field(default_factory=list)
    finished: list[FinishedTrick] = field(default_factory=list)
    scores: list[int] = field(default_factory=lambda: [0, 0, 0, 0])
    completed_rounds: list[RoundResult] = field(default_factory=list)
    winners: list[int] = field(default_factory=list)

    @property
    def seats(self) -> int:
        """Seats of people (the card monster is not one of them)."""
        return self.people

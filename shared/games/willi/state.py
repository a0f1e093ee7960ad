"""The complete state of a Willi game as plain data, and its JSON form.

Everything the engine knows lives here, hidden cards included; what a seat
may see is cut out of it by ``Willi.view`` alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from shared.games.willi.cards import value

Play = tuple[int, str]
RoundResult = dict[str, list[int]]


def copy_results(results: list[RoundResult]) -> list[RoundResult]:
    """Independent copies of round results (``sums``, ``awards``, ``trick_winners``)."""
    return [{key: list(values) for key, values in done.items()} for done in results]


@dataclass
class FinishedTrick:
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

    def to_dict(self) -> dict[str, Any]:
        """JSON form; also the public record shown in views."""
        give, take = self.exchange or (None, None)
        return {"plays": [[seat, card] for seat, card in self.plays], "winner": self.winner,
                "caller": self.caller,
                "exchange": None if give is None else {"give": give, "take": take}}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> FinishedTrick:
        """Inverse of :meth:`to_dict`."""
        swap = data["exchange"]
        return cls([(seat, card) for seat, card in data["plays"]], data["winner"], data["caller"],
                   None if swap is None else (swap["give"], swap["take"]))


@dataclass
class WilliState:
    """One game: setup inputs, the round in progress and the running totals."""

    people: int
    seed: int
    #: Explicit deals from the setup, by round; later rounds come from the seed.
    deals: list[list[list[str]]]
    round: int
    phase: str
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

    def to_dict(self) -> dict[str, Any]:
        """JSON-compatible copy of everything."""
        return {
            "people": self.people, "seed": self.seed,
            "deals": [[list(hand) for hand in deal] for deal in self.deals],
            "round": self.round, "phase": self.phase,
            "hands": [list(hand) for hand in self.hands], "discards": list(self.discards),
            "leader": self.leader, "trick": [[seat, card] for seat, card in self.trick],
            "caller": self.caller, "asking": list(self.asking),
            "finished": [trick.to_dict() for trick in self.finished],
            "scores": list(self.scores),
            "completed_rounds": copy_results(self.completed_rounds),
            "winners": list(self.winners),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> WilliState:
        """Inverse of :meth:`to_dict` (copies, so the stored document stays untouched)."""
        return cls(
            people=data["people"], seed=data["seed"],
            deals=[[list(hand) for hand in deal] for deal in data["deals"]],
            round=data["round"], phase=data["phase"],
            hands=[list(hand) for hand in data["hands"]], discards=list(data["discards"]),
            leader=data["leader"], trick=[(seat, card) for seat, card in data["trick"]],
            caller=data["caller"], asking=list(data["asking"]),
            finished=[FinishedTrick.from_dict(trick) for trick in data["finished"]],
            scores=list(data["scores"]),
            completed_rounds=copy_results(data["completed_rounds"]),
            winners=list(data["winners"]),
        )

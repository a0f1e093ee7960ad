"""The complete state of a Mau-Mau game as plain data.

Everything the engine knows lives here, the stock's order and every hand
included; what a seat may see is cut out of it by ``MauMau.view`` alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from shared.games.record import Record


class Phase(StrEnum):
    """What the seat whose turn it is may do."""

    #: Play a matching card or draw one.
    PLAY = "play"
    #: Having drawn: play the drawn card or pass.
    DRAWN = "drawn"
    OVER = "over"


@dataclass
class MauMauState(Record):
    """One game of Mau-Mau (a single round)."""

    restorers = {"phase": Phase}

    seats: int
    seed: int
    #: Every seat's hand, kept sorted (suit, then rank).
    hands: list[list[str]]
    #: Face-down cards to draw from, the top (next drawn) first.
    stock: list[str]
    #: The face-up discard pile, bottom first: its last card is the top card.
    pile: list[str]
    #: The seat whose turn it is.
    turn: int
    phase: Phase = Phase.PLAY
    #: The suit the last J asked for, until the next card is played.
    wish: str | None = None
    #: The card the seat on turn drew this turn (phase ``drawn``), the only one it may play.
    drawn: str | None = None
    #: Reshuffles so far: each one shuffles with its own derived generator.
    reshuffles: int = 0
    #: Final points per seat (minus the cards left in hand); zeros until the game ends.
    scores: list[int] = field(default_factory=list)
    winners: list[int] = field(default_factory=list)

    @property
    def round(self) -> int:
        """Mau-Mau is one round: always 1."""
        return 1

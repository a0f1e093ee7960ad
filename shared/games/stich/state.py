"""The complete, JSON-compatible state of one game of Willi Stich."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from shared.games.record import Record
from shared.games.stich.deal import SetupRound
from shared.games.stich.tricks import PlayedCard


class Phase(StrEnum):
    """What the table is waiting for."""

    CHOOSE_TRUMP = "choose_trump"
    CALL = "call"
    PLAY = "play"
    OVER = "over"


@dataclass
class StichState(Record):
    """Everything needed to continue a game; cards are strings, seats ints."""

    restorers = {"phase": Phase}
    #: The first dealer is an option only: ``dealer`` carries the deal on from there.
    retired = frozenset({"first_dealer"})

    seats: int
    seed: int
    start_round: int
    setup_rounds: list[SetupRound]
    round: int
    dealer: int
    #: Deals of the current round so far minus one (a leave makes a redeal).
    deal_no: int
    phase: Phase
    #: The seat that owes the next decision (None once the game is over).
    turn: int | None
    trump: str | None
    turned: str | None
    hands: list[list[str]]
    calls: list[int | None]
    tricks_taken: list[int]
    trick: list[PlayedCard]
    #: Collected tricks of the current round: {"cards": [[seat, card], ...], "winner": seat}.
    played_tricks: list[dict[str, Any]]
    active: list[bool]
    scores: list[int]
    completed_rounds: list[dict[str, Any]]
    winners: list[int]

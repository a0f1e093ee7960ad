"""The complete, JSON-compatible state of one game of Willi Stich."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, fields
from enum import StrEnum
from typing import Any

from shared.games.stich.deal import SetupRound
from shared.games.stich.tricks import PlayedCard


class Phase(StrEnum):
    """What the table is waiting for."""

    CHOOSE_TRUMP = "choose_trump"
    CALL = "call"
    PLAY = "play"
    OVER = "over"


@dataclass
class StichState:
    """Everything needed to continue a game; cards are strings, seats ints."""

    seats: int
    seed: int
    start_round: int
    first_dealer: int
    setup_rounds: list[SetupRound]
    round: int
    dealer: int
    #: Deals of the current round so far minus one (a leave makes a redeal).
    deal_no: int
    phase: str
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

    def to_dict(self) -> dict[str, Any]:
        """A deep, JSON-compatible copy (a JSON round trip: the fastest deep copy here)."""
        data: dict[str, Any] = json.loads(json.dumps(vars(self)))
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> StichState:
        """Rebuild from :meth:`to_dict` output; KeyError/TypeError on foreign data."""
        names = {field.name for field in fields(cls)}
        if set(data) != names:
            raise KeyError(f"state fields differ: {sorted(set(data) ^ names)}")
        return cls(**json.loads(json.dumps(dict(data))))

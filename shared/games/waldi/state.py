"""The complete Wie Waldi table state as plain data, and questions about it.

Everything here is JSON-compatible so that :meth:`WaldiState.to_dict` is the
stored form; the engine owns every change.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, TypedDict

from shared.games.record import Record
from shared.games.waldi.cards import is_head, left_colour, right_colour
from shared.games.waldi.deal import Piles


class Phase(StrEnum):
    """Every seat plays at once until the game is over."""

    PLAY = "play"
    OVER = "over"


class Dog(TypedDict):
    """A dog on the table: ``by[i]`` laid ``cards[i]``; ids ``d1, d2, ...`` per round."""

    id: str
    cards: list[str]
    by: list[int]
    complete: bool
    owner: int | None


class RoundResult(TypedDict):
    """One finished round, as the state summary lists it."""

    cards_won: list[int]
    points: list[int]
    stopped_by: int | None


@dataclass
class WaldiState(Record):
    """Options, seed, the explicit deals of a setup, and the live round."""

    seats: int
    options: dict[str, Any]
    seed: int
    fixed_deals: list[Piles]
    round: int
    piles: Piles
    held: list[str | None]
    #: The pile each held card came from (it may only go back under that pile).
    held_from: list[int | None]
    dogs: list[Dog]
    tokens_left: list[int]
    #: Held cards thrown away when the round ended (they count nowhere).
    discarded: list[list[str]]
    scores: list[int]
    completed_rounds: list[RoundResult]
    over: bool
    winners: list[int]

    @property
    def phase(self) -> Phase:
        """Play, until the third round is over."""
        return Phase.OVER if self.over else Phase.PLAY

    def find_dog(self, dog_id: str) -> Dog | None:
        """The dog with this id in the current round, if any."""
        for dog in self.dogs:
            if dog["id"] == dog_id:
                return dog
        return None

    def open_ends(self) -> set[str]:
        """Colours at the open ends of the incomplete dogs."""
        return {end for dog in self.dogs if not dog["complete"]
                and (end := right_colour(dog["cards"][-1])) is not None}

    def unplayed(self) -> Iterator[str]:
        """Cards still in play for this round: held or in piles."""
        for seat in range(self.seats):
            card = self.held[seat]
            if card is not None:
                yield card
            for pile in self.piles[seat]:
                yield from pile

    def dead_end(self) -> bool:
        """True when no seat can ever place a card again this round.

        Only placed cards change the open ends, and draw/return cycles can bring
        any pile card into a hand; so play can go on exactly while some unplayed
        card is a head or fits a current open end.
        """
        ends = self.open_ends()
        return not any(is_head(card) or left_colour(card) in ends for card in self.unplayed())


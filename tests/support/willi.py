"""Deals and drivers shared by the Willi tests (no tests of its own)."""

from __future__ import annotations

import json
import random
import re
from typing import Any

from shared.games.willi.engine import Willi
from tests.support.engines import act

#: The deal of the rules kit's examples (4 people; hand 3 reordered for the monster case).
EXAMPLE_DEAL = [
    ["R5", "R9", "Y2", "Y7", "G3", "G8", "B4", "B6", "B9"],
    ["R1", "R6", "Y5", "Y9", "G1", "G6", "B1", "B7", "B8"],
    ["R2", "R7", "Y1", "Y4", "G2", "G7", "G9", "B2", "B5"],
    ["R3", "R4", "R8", "Y3", "Y6", "Y8", "G4", "G5", "B3"],
]
MONSTER_DEAL = [*EXAMPLE_DEAL[:3], ["Y3", "R3", "R4", "R8", "Y6", "Y8", "G4", "G5", "B3"]]
#: Seat 0 holds the low cards, seat 3 only blues: good for the two-trick limit.
LOW_DEAL = [
    ["R1", "R2", "R3", "Y1", "Y2", "Y3", "G1", "G2", "G3"],
    ["R4", "R5", "R6", "Y4", "Y5", "Y6", "G4", "G5", "G6"],
    ["R7", "R8", "R9", "Y7", "Y8", "Y9", "G7", "G8", "G9"],
    ["B1", "B2", "B3", "B4", "B5", "B6", "B7", "B8", "B9"],
]
#: Nearly one colour per seat: seat 1 has no red and no 5, seat 2 holds Y5.
COLOUR_DEAL = [
    ["R1", "R2", "R3", "R4", "R5", "R6", "R7", "R8", "R9"],
    ["Y1", "Y2", "Y3", "Y4", "Y6", "Y7", "Y8", "Y9", "G9"],
    ["Y5", "G1", "G2", "G3", "G4", "G5", "G6", "G7", "G8"],
    ["B1", "B2", "B3", "B4", "B5", "B6", "B7", "B8", "B9"],
]
CARD = re.compile(r"\b[RYGB][1-9]\b")


def dealt(hands: list[list[str]], people: int = 4, seed: int = 0) -> Willi:
    """A game whose first round is dealt exactly as given."""
    return Willi.new(people, {}, seed, {"rounds": [{"hands": hands}]})




def discard(game: Willi, *cards: str) -> list[dict[str, Any]]:
    """Every person discards, seat 0 first: ``cards[seat]``."""
    events: list[dict[str, Any]] = []
    for seat, card in enumerate(cards):
        events += act(game, seat, "discard", card=card)
    return events


def play_cards(game: Willi, *cards: str, meinz: tuple[int, int] | None = None,
               swap: tuple[str, str] | None = None) -> list[list[int]]:
    """Play cards in turn order, passing in every window except ``meinz=(after_card, seat)``.

    After the trick the winner swaps ``swap=(give, take)`` or declines. Returns the
    seats asked in each window that opened, in order.
    """
    windows: list[list[int]] = []
    for number, card in enumerate(cards, start=1):
        act(game, game.to_act()[0], "play", card=card)
        asked: list[int] = []
        while game.state.phase == "call":
            seat = game.to_act()[0]
            asked.append(seat)
            act(game, seat, "meinz" if meinz == (number, seat) else "pass")
        if asked:
            windows.append(asked)
    if game.state.phase == "exchange":
        winner = game.to_act()[0]
        if swap:
            act(game, winner, "exchange", give=swap[0], take=swap[1])
        else:
            act(game, winner, "pass")
    return windows


def random_step(game: Willi, rng: random.Random) -> tuple[int, dict[str, Any], list[Any]]:
    """Apply one random legal action of the first seat to act; return it and its events."""
    seat = game.to_act()[0]
    action = rng.choice(game.legal_actions(seat))
    return seat, action, game.apply(seat, action)


def finish_randomly(game: Willi, rng: random.Random) -> list[dict[str, Any]]:
    """Play random legal actions to the end; return all events."""
    events: list[dict[str, Any]] = []
    while not game.over:
        events += random_step(game, rng)[2]
    return events


def cards_shown(data: Any) -> set[str]:
    """Every card named anywhere in a JSON-able structure."""
    return set(CARD.findall(json.dumps(data)))


class EventScorer:
    """Recomputes every round's sums, awards and totals from public events alone.

    What a client could do with the event stream; tests compare it with the
    engine's own results, so scoring is checked by an independent reading.
    """

    def __init__(self, people: int) -> None:
        self.people = people
        self.table: list[str] = []
        self.piles: list[list[str]] = [[] for _ in range(4)]
        self.totals = [0, 0, 0, 0]
        self.rounds = 0

    def feed(self, events: list[dict[str, Any]]) -> None:
        """Follow the events; assert each round's and the game's results."""
        for event in events:
            kind = event["type"]
            if kind == "played":
                self.table.append(event["card"])
            elif kind == "trick_won":
                self.piles[event["seat"]] += self.table
                self.table = []
            elif kind == "exchanged":
                pile = self.piles[event["seat"]]
                pile.remove(event["take"])
                pile.append(event["give"])
            elif kind == "round_over":
                self._check_round(event)
            elif kind == "game_over":
                assert event["scores"] == self.totals
                best = max(self.totals[:self.people])
                assert event["winners"] == [s for s in range(self.people) if self.totals[s] == best]

    def _check_round(self, event: dict[str, Any]) -> None:
        assert all(len(pile) == 8 for pile in self.piles), self.piles
        sums = [sum(int(card[1]) for card in pile) for pile in self.piles]
        if self.people == 3:
            sums[3] += 12
        assert event["sums"] == sums
        # Place = 1 + strictly higher sums; shared sums earn nothing.
        expected = [0 if sums.count(s) > 1 else {1: 3, 2: 1, 3: 0, 4: 2}[1 + sum(o > s for o in sums)]
                    for s in sums]
        assert event["awards"] == expected
        self.totals = [t + a for t, a in zip(self.totals, expected, strict=True)]
        assert event["scores"] == self.totals
        self.rounds += 1
        assert event["round"] == self.rounds
        self.piles = [[] for _ in range(4)]

"""Bots for Willi: the random baseline and a heuristic that aims for the highest sum.

The heuristic reads only its own view. It claims tricks with "Meinz" when their
expected total is high, pads its own tricks with high cards (and high hand
cards swapped in by the exchange), and feeds its lowest cards to tricks that
others will take.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from shared.games.base import Action, View
from shared.games.bots import RandomBot
from shared.games.willi.cards import full_deck, value
from shared.games.willi.rules import POSITIONS, TRICK_LIMIT, TRICKS_PER_ROUND


@dataclass(frozen=True)
class Table:
    """The facts of a view the heuristic needs, read once per decision."""

    seat: int
    hand: list[str]
    trick: list[tuple[int, str]]
    caller: int | None
    tricks_taken: list[int]
    tricks_done: int
    unknown_mean: float

    @classmethod
    def from_view(cls, view: View) -> Table:
        """Pull what matters out of ``view``; unseen cards average the unknown values."""
        seat = view["seat"]
        hand = list(view["hands"][seat])
        trick = [(player, card) for player, card in view["trick"]]
        seen = set(hand) | {card for _, card in trick}
        for done in view["tricks"]:
            seen |= {card for _, card in done["plays"]}
        unseen = [value(card) for card in full_deck() if card not in seen]
        mean = sum(unseen) / len(unseen) if unseen else 5.0
        return cls(seat, hand, trick, view["caller"], list(view["tricks_taken"]),
                   len(view["tricks"]), mean)

    def expected_total(self) -> float:
        """Trick total so far plus an average card for each seat still to play."""
        known = sum(value(card) for _, card in self.trick)
        return known + (POSITIONS - len(self.trick)) * self.unknown_mean

    def contenders_low(self) -> int:
        """Lowest value on the trick among seats that may still take it (10 if none)."""
        values = [value(card) for player, card in self.trick
                  if self.tricks_taken[player] < TRICK_LIMIT]
        return min(values, default=10)


class HeuristicBot:
    """Goes for the highest round sum: claim rich tricks, starve the others."""

    def __init__(self, threshold: float = 20.0) -> None:
        #: Expected trick total worth a "Meinz"; 20 (an average trick) beat 16..28 in trials.
        self.threshold = threshold

    def choose(self, view: View, rng: random.Random) -> Action:
        """Decide by phase; any tie between equal options goes to the first legal one."""
        legal: list[Action] = view["legal"]
        table = Table.from_view(view)
        phase = view["phase"]
        if phase == "discard":
            return min(legal, key=lambda action: value(action["card"]))
        if phase == "call":
            return {"type": "meinz" if self._worth_claiming(table) else "pass"}
        if phase == "exchange":
            return self._best_exchange(legal)
        return {"type": "play", "card": self._card_to_play(table, [a["card"] for a in legal])}

    def _worth_claiming(self, table: Table) -> bool:
        """Claim when the trick promises a high total, or when time runs out to get two."""
        need = TRICK_LIMIT - table.tricks_taken[table.seat]
        tricks_left = TRICKS_PER_ROUND - table.tricks_done
        if tricks_left <= need:
            return True
        return table.expected_total() >= self.threshold

    def _card_to_play(self, table: Table, cards: Sequence[str]) -> str:
        """High cards into own tricks, low ones into the tricks of others."""
        by_value = sorted(cards, key=value)
        if table.caller == table.seat:
            return by_value[-1]
        if table.caller is not None:
            return by_value[0]
        if len(table.trick) == POSITIONS - 1:
            return self._last_card(table, by_value)
        # Still open: lead or follow high, hoping to claim a rich trick.
        return by_value[-1]

    def _last_card(self, table: Table, by_value: list[str]) -> str:
        """As the last card: take a rich trick with a low card, else dump without winning."""
        low = table.contenders_low()
        winning = [card for card in by_value if value(card) <= low]
        losing = [card for card in by_value if value(card) > low]
        known = sum(value(card) for _, card in table.trick)
        if winning and known + value(winning[0]) >= self.threshold:
            return winning[0]
        return losing[0] if losing else by_value[-1]

    @staticmethod
    def _best_exchange(legal: list[Action]) -> Action:
        """Swap the largest gain for the own pile (high hand card in, low trick card out)."""
        best: Action = {"type": "pass"}
        best_gain = 0
        for action in legal:
            if action["type"] == "exchange":
                gain = value(action["give"]) - value(action["take"])
                if gain > best_gain:
                    best, best_gain = action, gain
        return best


BOTS: dict[str, type] = {"random": RandomBot, "heuristic": HeuristicBot}

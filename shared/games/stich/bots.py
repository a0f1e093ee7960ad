"""Bots for Willi Stich; they decide from ``view(seat)`` only.

The heuristic bot calls what its hand is worth (and, in the forehead round,
works out its chance from the cards it can see), then plays to hit its call
exactly: it takes tricks while it still needs some and ducks once it has enough.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

from shared.games.base import Action, View
from shared.games.bots import RandomBot
from shared.games.stich.cards import DECK, SUITS, rank_of, suit_of
from shared.games.stich.tricks import beats, trick_winner

#: Chance that a trump of rank 7..A takes a trick (at a table of three).
TRUMP_WORTH = (0.2, 0.25, 0.3, 0.4, 0.5, 0.65, 0.8, 0.95)
#: Chance that a plain ace, king or queen takes a trick (at a table of three).
PLAIN_WORTH = {7: 0.75, 6: 0.35, 5: 0.1}
#: Tables are counted against this size: more players, fewer tricks per card.
BASE_TABLE = 3


class HeuristicBot:
    """Calls its hand's worth and plays to make the call exactly."""

    def choose(self, view: View, rng: random.Random) -> Action:
        """Pick a trump, a call or a card; always one of ``view["legal"]``."""
        legal: list[Action] = view["legal"]
        kind = legal[0]["type"]
        if kind == "trump":
            return self._trump(view)
        if kind == "call":
            return self._call(view, legal)
        if "card" not in legal[0]:
            return dict(legal[0])
        return {"type": "play", "card": self._card(view, [a["card"] for a in legal])}

    @staticmethod
    def _trump(view: View) -> Action:
        hand: list[str] = view["hand"]
        weight = Counter[str]()
        for card in hand:
            weight[suit_of(card)] += 2 + rank_of(card)
        return {"type": "trump", "suit": max(SUITS, key=lambda suit: weight[suit])}

    def _call(self, view: View, legal: list[Action]) -> Action:
        wanted = self._estimate(view)
        return dict(min(legal, key=lambda action: abs(action["tricks"] - wanted)))

    @staticmethod
    def _estimate(view: View) -> float:
        players = sum(view["active"])
        if view["kind"] == "forehead":
            return _forehead_chance(view)
        if view["hand"] is None:  # blind round: only the odds are known
            return view["hand_size"] / players * 0.8
        worth = 0.0
        for card in view["hand"]:
            rank = rank_of(card)
            worth += TRUMP_WORTH[rank] if suit_of(card) == view["trump"] else PLAIN_WORTH.get(
                rank, 0.0)
        return worth * BASE_TABLE / players

    @staticmethod
    def _card(view: View, cards: list[str]) -> str:
        seat, trump, trick = view["seat"], view["trump"], view["trick"]
        need = view["calls"][seat] - view["tricks_taken"][seat]
        led = suit_of(trick[0][1]) if trick else None

        def strength(card: str) -> tuple[bool, bool, int]:
            return suit_of(card) == trump, suit_of(card) == led, rank_of(card)

        if not trick:
            return max(cards, key=strength) if need > 0 else min(cards, key=strength)
        best = next(card for player, card in trick if player == trick_winner(trick, trump))
        winning = [card for card in cards if beats(card, best, trump)]
        losing = [card for card in cards if card not in winning]
        last = len(trick) == sum(view["active"]) - 1
        if need > 0 and winning:
            return min(winning, key=strength) if last else max(winning, key=strength)
        if need > 0:
            return min(cards, key=strength)
        return max(losing, key=strength) if losing else min(winning, key=strength)


def _forehead_chance(view: View) -> float:
    """Chance that the own unseen card takes the one trick, given every other card."""
    seat, seats = view["seat"], len(view["active"])
    seen: dict[int, str] = {owner: hand[0] for owner, hand in enumerate(view["hands"])
                            if hand and owner != seat}
    unseen = Counter(DECK) - Counter(seen.values()) - Counter([view["turned"]] * bool(
        view["turned"]))
    order = [(view["dealer"] + step) % seats for step in range(1, seats + 1)]
    wins = total = 0
    for card, copies in unseen.items():
        trick: list[list[Any]] = [[player, card if player == seat else seen[player]]
                                  for player in order if player == seat or player in seen]
        wins += copies * (trick_winner(trick, view["trump"]) == seat)
        total += copies
    return wins / total


BOTS: dict[str, type] = {"random": RandomBot, "heuristic": HeuristicBot}

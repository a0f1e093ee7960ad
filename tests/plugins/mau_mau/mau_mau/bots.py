"""Bots for Mau-Mau: the random baseline and a simple heuristic that sheds cards.

Both read only their own view (``view["legal"]`` and ``view["hand"]``).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence

from mau_mau.cards import JACK, SUITS, rank, suit
from shared.games.base import Action, View
from shared.games.bots import Bot, RandomBot


def favourite_suit(cards: Sequence[str]) -> str:
    """The suit most of ``cards`` (Js aside: they follow any wish) are of; ties and an
    empty hand go to the first suit in C, S, H, D order."""
    counts = Counter(suit(card) for card in cards if rank(card) != JACK)
    return max(SUITS, key=lambda candidate: counts[candidate])


class HeuristicBot:
    """Plays a matching card other than a J if it has one, keeps its Js for when nothing
    else matches (wishing the suit it holds most of), and only then draws or passes."""

    def choose(self, view: View, rng: random.Random) -> Action:
        """Deterministic: of several matching cards the one of its most frequent suit."""
        legal: list[Action] = view["legal"]
        hand: list[str] = view["hand"]
        plays = [action for action in legal if action["type"] == "play"]
        plain = [action for action in plays if rank(action["card"]) != JACK]
        if plain:
            counts = Counter(suit(card) for card in hand)
            return max(plain, key=lambda action: counts[suit(action["card"])])
        if plays:
            jack = plays[0]["card"]
            rest = [card for card in hand if card != jack]
            return {"type": "play", "card": jack, "wish": favourite_suit(rest)}
        return next(action for action in legal if action["type"] in ("draw", "pass"))


BOTS: dict[str, type[Bot]] = {"random": RandomBot, "heuristic": HeuristicBot}

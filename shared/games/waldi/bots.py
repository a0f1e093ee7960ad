"""Wie Waldi bots. They decide from ``view(seat)`` only.

``random`` is the shared uniform bot. Random Wie Waldi games still end with
probability 1: every draw/return cycle gives a fitting card a fixed chance to be
played, and the round ends on its own once no card can ever be placed.

``heuristic`` plays like a quick human: it lays every head at once, attaches
where the card fits (its own dogs first, cat tails on the longest dog), lets a
plain tail complete only its own dogs, returns what fits nothing, and works on
its smallest pile to earn the pile bonus. Its attaches carry ``at`` from its
view, so on a real server a lost race comes back as ``STALE``.
"""

from __future__ import annotations

import random

from shared.games.base import Action, View
from shared.games.bots import RandomBot
from shared.games.waldi.cards import has_cat, is_head, is_tail

#: How often the heuristic bot draws from a random pile instead of its smallest one,
#: so that a small pile of cards that fit nowhere cannot trap it.
EXPLORE = 0.3


class HeuristicBot:
    """Greedy: play heads, grow own dogs, steal with cats, empty one pile first."""

    def choose(self, view: View, rng: random.Random) -> Action:
        """Play the held card where it is worth most, else return it; or draw."""
        legal: list[Action] = view["legal"]
        if not view["hand"]:
            return self._draw(view, legal, rng)
        card: str = view["hand"][0]
        if is_head(card):
            return {"type": "place_head"}
        dogs = {dog["id"]: dog for dog in view["dogs"]}
        options = [(self._worth(card, dogs[a["dog"]], view["seat"]), a["dog"])
                   for a in legal if a["type"] == "attach"]
        worth, dog_id = max(options, default=(0, ""))
        if worth <= 0:
            return {"type": "return"}
        return {"type": "attach", "dog": dog_id, "at": len(dogs[dog_id]["cards"])}

    @staticmethod
    def _worth(card: str, dog: View, seat: int) -> int:
        """Cards this attach brings the bot (roughly); 0 or less means better keep it."""
        length = len(dog["cards"]) + 1
        mine = dog["by"][0] == seat
        if has_cat(card):
            return length
        if is_tail(card):
            return length if mine else 0
        return 2 if mine else 1

    @staticmethod
    def _draw(view: View, legal: list[Action], rng: random.Random) -> Action:
        if rng.random() < EXPLORE:
            return dict(rng.choice(legal))
        sizes = view["pile_sizes"][view["seat"]]
        return dict(min(legal, key=lambda a: sizes[a["pile"]]))


BOTS: dict[str, type] = {"random": RandomBot, "heuristic": HeuristicBot}

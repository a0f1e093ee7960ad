"""Wie Waldi as the terminal client writes it: the dogs on the table, the piles each seat
draws from and the tokens left, and cards in the order the view lists them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from shared.games.words import SeatNames, Words, table_rows


class WaldiWords(Words):
    """Wie Waldi's words."""

    phrases = {
        "round_started": "round {round} starts: everybody builds at once",
        "draw": "{who} draw(s) from pile {pile}",
        "return": "{who} put(s) a card back on pile {pile}",
        "place_head": "{who} start(s) dog {dog} with {card:card}",
        "attach": "{who} attach(es) {card:card} to dog {dog} (now {length} long)",
        "dog_complete": "dog {dog} is complete: {owner:seat} own(s) it",
        "stop": "{who} call(s) Stop!",
    }
    action_help = {
        "draw": "take the top card of this pile of yours into your hand",
        "return": "put the held card back under its pile",
        "place_head": "lay the held head: it starts a new dog",
        "attach": "attach the held card to this dog (colours must meet)",
    }
    seat_columns = {"pile_sizes": "piles", "tokens_left": "tokens"}

    def action_text(self, action: Mapping[str, Any]) -> str:
        """Where the move goes: "draw pile 2", "attach to dog d3"."""
        if "pile" in action:
            return f"{action['type']} pile {action['pile']}"
        if "dog" in action:
            return f"{action['type']} to dog {action['dog']}"
        return super().action_text(action)

    def view_lines(self, view: Mapping[str, Any], seats: SeatNames) -> list[str]:
        """The dogs: id, cards head to tail, and who owns a complete one."""
        rows = [[dog["id"], " ".join(dog["cards"]),
                 f"complete: {seats.possessive(dog['owner'])} dog" if dog["complete"] else "open"]
                for dog in view.get("dogs") or []]
        return ["   dogs:", *table_rows(rows)] if rows else ["   dogs: none yet"]


WORDS = WaldiWords()

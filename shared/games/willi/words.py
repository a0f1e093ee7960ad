"""Willi as the terminal client writes it: hands by colour, the trick with its Meinz claim,
and the card monster, which holds the fourth position at a table of three people."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from shared.games.willi.cards import sort_key
from shared.games.words import SeatNames, Words, trick_lines

#: The monster's position: the fourth, which no person holds at a table of three.
MONSTER_SEAT = 3


class WilliWords(Words):
    """Willi's words."""

    phrases = {
        "round_started": "round {round} is dealt · {start_player:seat} lead(s) the first trick",
        "discarded": "{who} discard(s) a card face down",
        "play_started": "everybody has discarded · {leader:seat} lead(s)",
        "played": "{who} play(s) {card:card}",
        "meinz": "{who} call(s) Meinz!",
        "passed": "{who} pass(es)",
        "trick_won": "{who} take(s) trick {trick}",
        "exchanged": "{who} swap(s) {give:card} for {take:card} from the trick",
        "no_exchange": "{who} keep(s) the hand",
    }
    action_help = {
        "discard": "lay this card aside face down for the round",
        "play": "play it (match the lead's colour or number if you can)",
        "meinz": "Meinz! claim this trick for yourself, whatever comes after",
        "pass": "no claim now / keep your hand as it is",
        "exchange": "swap a hand card for a trick card of the same colour",
    }
    seat_columns = {"hand_sizes": "cards", "tricks_taken": "tricks"}
    round_gains = "awards"

    def card_key(self, card: str) -> tuple[int, ...]:
        """By colour (R, Y, G, B), then value."""
        return sort_key(card)

    def seat_name(self, seat: int) -> str | None:
        """The fourth position with no person in it is the card monster."""
        return "monster" if seat == MONSTER_SEAT else None

    def action_card(self, action: Mapping[str, Any]) -> str | None:
        """An exchange is about the hand card it gives."""
        give = action.get("give")
        return give if isinstance(give, str) else super().action_card(action)

    def action_text(self, action: Mapping[str, Any]) -> str:
        """An exchange names both cards: "exchange R5 for R7"."""
        if "give" in action:
            return f"{action['type']} {self.card_text(action['give'])} for {self.card_text(action['take'])}"
        return super().action_text(action)

    def view_lines(self, view: Mapping[str, Any], seats: SeatNames) -> list[str]:
        """The trick on the table, the Meinz caller's card marked."""
        caller = view.get("caller")
        marks = {} if caller is None else {caller: "(Meinz!)"}
        return trick_lines(self, view.get("trick") or [], seats, marks)


WORDS = WilliWords()

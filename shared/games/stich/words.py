"""Willi Stich as the terminal client writes it: suits as card players write them (♣♠♥♦),
hands by suit then rank, and the round's kind, trumps and turned-up card."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from shared.games.stich.cards import SUITS, sort_key
from shared.games.words import SeatNames, Words, trick_lines

#: Suit letter -> the sign card players write.
SUIT_SIGNS = dict(zip(SUITS, "♣♠♥♦", strict=True))


class StichWords(Words):
    """Willi Stich's words."""

    phrases = {
        "deal": "round {round} ({kind}, {hand_size} cards) dealt by {dealer:seat} · turned: {turned:card}",
        "trump": "{who} name(s) trumps: {suit:card}",
        "call": "{who} call(s) {tricks}",
        "play": "{who} play(s) {card:card}",
        "trick": "{winner:seat} take(s) the trick ({cards:cards})",
        "leave": "{who} leave(s) the game (total {score} stays)",
        "round_cancelled": "round {round} is dealt again",
        "chat": "{who}: {text}",
    }
    action_help = {
        "trump": "as dealer, name the trump suit",
        "call": "say how many tricks you will take (exactly right scores)",
        "play": "play it (follow the led suit if you can)",
    }
    seat_columns = {"hand_counts": "cards", "calls": "called", "tricks_taken": "tricks"}

    def card_key(self, card: str) -> tuple[int, ...]:
        """By suit (♣ ♠ ♥ ♦), then rank."""
        return sort_key(card)

    def card_text(self, card: str) -> str:
        """The suit letter as its sign: "H9" reads "♥9", the suit "H" alone "♥"."""
        sign = SUIT_SIGNS.get(card[:1])
        return card if sign is None else sign + card[1:]

    def action_text(self, action: Mapping[str, Any]) -> str:
        """Naming trumps shows the suit's sign: "trump ♥"."""
        if "suit" in action:
            return f"{action['type']} {self.card_text(action['suit'])}"
        return super().action_text(action)

    def header_facts(self, view: Mapping[str, Any]) -> list[str]:
        """The round's kind and its trump suit."""
        facts = [str(view["kind"]).replace("_", " ")] if view.get("kind") else []
        return facts + ([f"trumps {self.card_text(view['trump'])}"] if view.get("trump") else [])

    def view_lines(self, view: Mapping[str, Any], seats: SeatNames) -> list[str]:
        """The trick on the table and the turned-up card."""
        lines = trick_lines(self, view.get("trick") or [], seats)
        return lines + ([f"   turned up: {self.card_text(view['turned'])}"] if view.get("turned") else [])


WORDS = StichWords()

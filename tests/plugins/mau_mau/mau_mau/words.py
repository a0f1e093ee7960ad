"""How Mau-Mau reads to people: suit signs, hands by suit then rank, one line per event."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mau_mau.cards import JACK, is_card, rank, sort_key, suit
from shared.games.words import SeatNames, Words

#: Suits as card players write them.
SUIT_SIGNS = {"C": "♣", "S": "♠", "H": "♥", "D": "♦"}


class MauMauWords(Words):
    """Mau-Mau's words. ``game_over`` is left to the table's shared line (winners, totals)."""

    phrases = {
        "played": "{who} play(s) {card:card}",
        "wished": "{who} wish(es) {suit:card}",
        "drew": "{who} draw(s) {count} from the stock",
        "penalty": "{who} draw(s) {count} for the 7",
        "skipped": "{whose} turn is skipped",
        "reshuffled": "the pile under the top card is shuffled into the stock ({count} cards)",
        "passed": "{who} pass(es)",
    }
    action_help = {
        "play": "play it (same suit or rank as the top card, or the wished suit; a J on all but a J)",
        "draw": "draw one card from the stock; you may then play only that card",
        "pass": "keep the drawn card: the next seat's turn",
    }

    def card_key(self, card: str) -> tuple[int, ...]:
        """Suit (C, S, H, D), then rank (7 .. A)."""
        return sort_key(card) if is_card(card) else ()

    def card_text(self, card: str) -> str:
        """``H10`` as ``♥10``, a wished suit ``H`` as ``♥``; anything else as it is."""
        if card in SUIT_SIGNS:
            return SUIT_SIGNS[card]
        return SUIT_SIGNS[suit(card)] + rank(card) if is_card(card) else card

    def action_text(self, action: Mapping[str, Any]) -> str:
        """A J's play names its wish as a suit sign: "play ♠J wish ♣"."""
        wish = action.get("wish")
        if isinstance(wish, str) and wish in SUIT_SIGNS:
            return f"play {self.card_text(str(action.get('card')))} wish {SUIT_SIGNS[wish]}"
        return super().action_text(action)

    def help_for(self, action: Mapping[str, Any]) -> str:
        """A J's play names what it asks of the next seat; the rest their type's line."""
        if action.get("type") == "play" and rank(str(action.get("card"))) == JACK:
            wish = SUIT_SIGNS.get(str(action.get("wish")), "?")
            return f"play the J and wish {wish}: the next card must be of that suit"
        return super().help_for(action)

    def view_lines(self, view: Mapping[str, Any], seats: SeatNames) -> list[str]:
        """The top card, the wished suit, the stock and pile sizes, and a card just drawn."""
        top = f"   top card: {self.card_text(view['top'])}"
        if view.get("wish"):
            top += f" · wished suit: {SUIT_SIGNS[view['wish']]}"
        lines = [top, f"   stock: {view['stock_size']} cards · pile: {view['pile_size']} cards"]
        if view.get("drawn"):
            lines.append(f"   you drew {self.card_text(view['drawn'])}: play it or pass")
        return lines


WORDS = MauMauWords()

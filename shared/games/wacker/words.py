"""Willi Wacker as the terminal client writes it: hands with beers before action cards,
the face-up trays and a running duel, and a line of help for each action card."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from shared.games.wacker.cards import FLORA, PRUEGEL, SCHNORRER, TRINK, ZAPFENSTREICH, sort_key
from shared.games.words import SeatNames, Words, table_rows

#: What each action card does, played on the own turn.
ACTION_CARD_HELP = {
    TRINK: "drink your tray: it is safe and its beers score",
    ZAPFENSTREICH: "send another seat's tray to the discard pile (nothing answers it)",
    FLORA: "duel for another seat's tray (PRUEGEL answers; the last PRUEGEL wins)",
    SCHNORRER: "take a hidden card from every other hand (each may answer PRUEGEL)",
    PRUEGEL: "no effect on your own turn",
}
#: What a card does as the answer in a duel.
RESPOND_HELP = {
    PRUEGEL: "answer with PRUEGEL: the last PRUEGEL wins the duel",
    ZAPFENSTREICH: "end the FLORA duel: the tray goes to the discard pile",
}


class WackerWords(Words):
    """Willi Wacker's words."""

    phrases = {
        "deal": "round {round} dealt by {dealer:seat} · {talon_size} cards in the talon",
        "turn": "{whose} turn",
        "draw": "{who} draw(s) {count}",
        "lay": "{who} lay(s) {cards:cards} as tray {tray}",
        "extend": "{who} add(s) {cards:cards} to tray {tray}",
        "action": "{who} play(s) {card:card}",
        "no_effect": "{whose} {card:card} has no effect",
        "drunk": "{who} drink(s) tray {tray} ({beers} beers)",
        "respond": "{who} answer(s) with {card:card}",
        "pass": "{who} pass(es)",
        "schnorrer": "{who} schnorr(s) from {victims:seats}",
        "card_taken": "{who} take(s) a card from {victim:seat}",
        "card_kept": "{who} keep(s) the card",
        "tray_stolen": "{who} steal(s) tray {tray} from {victim:seat}",
        "tray_kept": "{who} keep(s) tray {tray}",
        "tray_discarded": "{owner:whose} tray {tray} goes to the discard pile",
    }
    action_help = {
        "lay": "lay these beers as a new tray (a set or a run)",
        "extend": "add these beers to your tray (it stays a set or run)",
        "respond": "answer the duel with this card",
        "pass": "give in / end your turn",
    }
    seat_columns = {"hand_sizes": "cards", "drunk": "drunk"}
    round_gains = "drunk"

    def card_key(self, card: str) -> tuple[int, ...]:
        """Beers by value, then the action cards."""
        return sort_key(card)

    def action_text(self, action: Mapping[str, Any]) -> str:
        """An action card is played ("play TRINK on tray t2"); beers go "to tray t1"."""
        played = action["type"] == "action"
        text = super().action_text({**{key: value for key, value in action.items() if key != "tray"},
                                    "type": "play" if played else action["type"]})
        tray = action.get("tray")
        return text if tray is None else f"{text} {'on' if played else 'to'} tray {tray}"

    def help_for(self, action: Mapping[str, Any]) -> str:
        """Each action card says what it does, played on the own turn or as a duel's answer."""
        if action["type"] == "action":
            return ACTION_CARD_HELP.get(str(action.get("card")), "")
        if action["type"] == "respond":
            return RESPOND_HELP.get(str(action.get("card")), "")
        return super().help_for(action)

    def view_lines(self, view: Mapping[str, Any], seats: SeatNames) -> list[str]:
        """The face-up trays (id, owner, cards) and the duel being fought, if any."""
        rows = [[tray["id"], seats(tray["owner"]), self.cards_text(tray["cards"])]
                for tray in view.get("trays") or []]
        lines = ["   trays:", *table_rows(rows)] if rows else ["   trays: none face up"]
        duel = view.get("duel")
        if duel:
            lines.append(f"   duel: {duel['kind'].upper()} by {seats(duel['thief'])} against "
                         f"{seats(duel['victim'])} · asked: {seats(duel['asked'])}")
        return lines


WORDS = WackerWords()

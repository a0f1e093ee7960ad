"""Plain-text pictures of a player's view, for the terminal client.

Everything comes from the view (``view(seat)``) and the events of each update;
names come from the table's seats. Tricks, trays and dogs are aligned tables,
the hand is sorted in the game's own order, and each choice has a line of help.
"""

from __future__ import annotations

from typing import Any

from shared.games.words import table_rows
from shared.sdk.client import Update
from shared.sdk.phrases import (
    Seats,
    action_help,
    action_text,
    card_text,
    cards_text,
    event_line,
    ordered_choices,
)


def describe_events(update: Update, seats: Seats, game: str) -> list[str]:
    """The commit's events, one compact line each."""
    return ["  · " + event_line(event, seats, game) for event in update.events]


def own_hand(view: dict[str, Any]) -> list[Any]:
    """The viewer's own cards, whichever key the game keeps them under."""
    hand = view.get("hand")
    if hand is None:
        hands, me = view.get("hands"), view.get("seat")
        hand = hands[me] if isinstance(hands, list) and isinstance(me, int) else None
    return list(hand or [])


def _plays(view: dict[str, Any], seats: Seats, game: str) -> list[str]:
    """The trick on the table: one row per card (seat name, card)."""
    trick = view.get("trick") or []
    if not trick:
        return []
    caller = view.get("caller")
    rows = [[seats(seat), card_text(game, card), "(Meinz!)" if seat == caller else ""]
            for seat, card in trick]
    return ["   trick:", *table_rows(rows)]


def _trays(view: dict[str, Any], seats: Seats, game: str) -> list[str]:
    """Willi Wacker's face-up trays: id, owner, cards."""
    trays = view.get("trays") or []
    rows = [[tray["id"], seats(tray["owner"]), cards_text(game, tray["cards"])] for tray in trays]
    return ["   trays:", *table_rows(rows)] if rows else ["   trays: none face up"]


def _dogs(view: dict[str, Any], seats: Seats, game: str) -> list[str]:
    """Wie Waldi's dogs: id, cards, who owns a complete one."""
    rows = [[dog["id"], " ".join(dog["cards"]),
             f"complete: {seats.possessive(dog['owner'])} dog" if dog["complete"] else "open"]
            for dog in view.get("dogs") or []]
    return ["   dogs:", *table_rows(rows)] if rows else ["   dogs: none yet"]


def _per_seat(view: dict[str, Any], seats: Seats) -> list[str]:
    """One row per seat with what the game keeps per seat: cards, tricks, calls, totals."""
    columns = [(key, title) for key, title in (
        ("hand_sizes", "cards"), ("hand_counts", "cards"), ("calls", "called"),
        ("tricks_taken", "tricks"), ("drunk", "drunk"), ("pile_sizes", "piles"),
        ("tokens_left", "tokens"),
        ("scores", "total")) if isinstance(view.get(key), list)]
    rows = [["", *(title for _, title in columns)]]
    for seat in range(len(view.get("scores") or [])):
        cells = [seats(seat)]
        for key, _ in columns:
            values = view[key]
            value = values[seat] if seat < len(values) else ""
            if isinstance(value, list):  # Wie Waldi's three piles: "5/4/6"
                value = "/".join(map(str, value))
            cells.append("-" if value is None else str(value))
        rows.append(cells)
    return table_rows(rows)


def _header(update: Update, seats: Seats) -> str:
    view = update.view
    waiting = ", ".join(seats(s) for s in view.get("to_act", []))
    facts = [f"{view.get('game', '?')}", f"round {view.get('round', '?')}", str(view.get("phase", "?"))]
    game = str(view.get("game"))
    if view.get("kind"):
        facts.append(str(view["kind"]).replace("_", " "))
    if view.get("trump"):
        facts.append(f"trumps {card_text(game, view['trump'])}")
    if "dealer" in view:
        facts.append(f"dealer {seats(view['dealer'])}")
    facts.append(f"waiting for: {waiting or 'nobody'}")
    return "── " + " · ".join(facts)


def render(update: Update, seats: Seats, fresh_events: bool = True) -> str:
    """The screen after an update: new events, the table, your hand, your numbered choices."""
    view = update.view
    game = str(view.get("game"))
    lines = describe_events(update, seats, game) if fresh_events else []
    lines.append(_header(update, seats))
    lines += _per_seat(view, seats)
    if "trays" in view:
        lines += _trays(view, seats, game)
        if view.get("duel"):
            duel = view["duel"]
            lines.append(f"   duel: {duel['kind'].upper()} by {seats(duel['thief'])} against "
                         f"{seats(duel['victim'])} · asked: {seats(duel['asked'])}")
    if "dogs" in view:
        lines += _dogs(view, seats, game)
    lines += _plays(view, seats, game)
    if view.get("turned"):
        lines.append(f"   turned up: {card_text(game, view['turned'])}")
    hand = own_hand(view)
    lines.append(f"   your hand: {cards_text(game, hand) or '(empty)'}")
    if view.get("over"):
        winners = ", ".join(seats(s) for s in view.get("winners", []))
        lines.append(f"   GAME OVER · winners: {winners}")
    choices = ordered_choices(game, view.get("legal", []))
    texts = [action_text(game, action, seats) for action in choices]
    width = max(map(len, texts), default=0)
    for number, (action, text) in enumerate(zip(choices, texts, strict=True), 1):
        help_text = action_help(game, action)
        lines.append(f"   [{number:>2}] {text.ljust(width)}{'  — ' + help_text if help_text else ''}")
    return "\n".join(lines)

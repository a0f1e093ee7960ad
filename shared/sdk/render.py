"""Plain-text pictures of a player's view, for the terminal client.

Everything comes from the view (``view(seat)``) and the events of each update;
names come from the table's seats. The header, the per-seat table, the hand and
the numbered choices are drawn here; the game's words give its hand order, its
own facts and sections (a trick, trays, ...) and a line of help for each choice.
"""

from __future__ import annotations

from typing import Any

from shared.games.words import table_rows
from shared.sdk.client import Update
from shared.sdk.phrases import Seats, event_line, ordered_choices


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


def _per_seat(view: dict[str, Any], seats: Seats) -> list[str]:
    """One row per seat with what the game keeps per seat (its words' columns), then the totals."""
    columns = [(key, title) for key, title in [*seats.words.seat_columns.items(), ("scores", "total")]
               if isinstance(view.get(key), list)]
    rows = [["", *(title for _, title in columns)]]
    for seat in range(len(view.get("scores") or [])):
        cells = [seats(seat)]
        for key, _ in columns:
            values = view[key]
            value = values[seat] if seat < len(values) else ""
            if isinstance(value, list):  # several numbers per seat (piles): "5/4/6"
                value = "/".join(map(str, value))
            cells.append("-" if value is None else str(value))
        rows.append(cells)
    return table_rows(rows)


def _header(view: dict[str, Any], seats: Seats) -> str:
    waiting = ", ".join(seats(s) for s in view.get("to_act", []))
    facts = [f"{view.get('game', '?')}", f"round {view.get('round', '?')}", str(view.get("phase", "?")),
             *seats.words.header_facts(view)]
    if "dealer" in view:
        facts.append(f"dealer {seats(view['dealer'])}")
    facts.append(f"waiting for: {waiting or 'nobody'}")
    return "── " + " · ".join(facts)


def render(update: Update, seats: Seats, fresh_events: bool = True) -> str:
    """The screen after an update: new events, the table, your hand, your numbered choices."""
    view = update.view
    game = str(view.get("game"))
    seats = seats.playing(game)
    words = seats.words
    lines = describe_events(update, seats, game) if fresh_events else []
    lines.append(_header(view, seats))
    lines += _per_seat(view, seats)
    lines += words.view_lines(view, seats)
    lines.append(f"   your hand: {words.cards_text(own_hand(view)) or '(empty)'}")
    if view.get("over"):
        winners = ", ".join(seats(s) for s in view.get("winners", []))
        lines.append(f"   GAME OVER · winners: {winners}")
    choices = ordered_choices(game, view.get("legal", []))
    texts = [words.action_text(action) for action in choices]
    width = max(map(len, texts), default=0)
    for number, (action, text) in enumerate(zip(choices, texts, strict=True), 1):
        help_text = words.help_for(action)
        lines.append(f"   [{number:>2}] {text.ljust(width)}{'  — ' + help_text if help_text else ''}")
    return "\n".join(lines)

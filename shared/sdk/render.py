"""Plain-text pictures of a player's view, for the terminal client."""

from __future__ import annotations

import json
from typing import Any

from shared.sdk.client import Update

#: View keys shown as "name: value" lines when a game's view has them.
TABLE_KEYS = ("dealer", "trump", "turned", "calls", "trick", "caller", "tricks_taken", "trays", "drunk",
              "talon_size", "hand_sizes", "tokens_left", "pile_sizes", "duel", "scores")


def seat_name(seat: int | None, me: int) -> str:
    """'you' for the viewer's own seat."""
    if seat is None:
        return "-"
    return "you" if seat == me else f"seat {seat}"


def describe_event(event: dict[str, Any], me: int) -> str:
    """One line per public event: its type, who, and the rest as key=value."""
    if event.get("type") == "game_started":
        names = ", ".join(f"{seat_name(s['seat'], me)}: {s['name']}" for s in event.get("seats", []))
        return f"game {event.get('game_no', 1)} starts · {names}"
    parts = [str(event.get("type", "?"))]
    for key, value in event.items():
        if key == "type":
            continue
        if key == "seat" and isinstance(value, int):
            parts.insert(0, seat_name(value, me) + ":")
            continue
        parts.append(f"{key}={json.dumps(value, separators=(',', ':'))}")
    return " ".join(parts)


def describe_events(update: Update, me: int) -> list[str]:
    """The commit's events, one line each."""
    return ["  · " + describe_event(e, me) for e in update.events]


def own_hand(view: dict[str, Any], me: int) -> Any:
    """The viewer's own cards, whichever key the game keeps them under."""
    if "hand" in view:
        return view["hand"]
    hands = view.get("hands")
    if isinstance(hands, list) and 0 <= me < len(hands):
        return hands[me]
    return view.get("held")


def describe_action(action: dict[str, Any]) -> str:
    """'play R5', 'call tricks=2', 'pass'."""
    rest = " ".join(f"{k}={json.dumps(v, separators=(',', ':'))}" if k != "card" else str(v)
                    for k, v in action.items() if k != "type")
    return f"{action['type']} {rest}".strip()


def render(update: Update, me: int, fresh_events: bool = True) -> str:
    """The screen after an update: new events, the table, your hand, your choices."""
    view = update.view
    lines = []
    if fresh_events:
        lines += describe_events(update, me)
    waiting = ", ".join(seat_name(s, me) for s in view.get("to_act", []))
    lines.append(f"── {view.get('game', '?')} · round {view.get('round', '?')} · "
                 f"{view.get('phase', '?')} · waiting for: {waiting or 'nobody'} · seq {update.seq}")
    for key in TABLE_KEYS:
        if key in view and view[key] not in (None, [], {}):
            lines.append(f"   {key}: {json.dumps(view[key], separators=(', ', ':'))}")
    if "dogs" in view:
        for dog in view["dogs"]:
            lines.append(f"   dog {dog.get('id')}: {' '.join(dog.get('cards', []))}"
                         f"{' (complete)' if dog.get('complete') else ''}")
    lines.append(f"   your hand: {' '.join(map(str, own_hand(view, me) or [])) or '(empty)'}")
    if view.get("over"):
        winners = ", ".join(seat_name(s, me) for s in view.get("winners", []))
        lines.append(f"   GAME OVER · winners: {winners}")
    for number, action in enumerate(view.get("legal", []), 1):
        lines.append(f"   [{number}] {describe_action(action)}")
    return "\n".join(lines)

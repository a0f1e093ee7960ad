"""A simple policy over one seat's own view: the heuristic bot and the turn clock's default.

It scores every legal action and takes the best (the first on ties), so it is
deterministic and can only ever choose a legal action.
"""

from __future__ import annotations

from shared.games.base import Action, View
from shared.games.wacker.cards import (
    FLORA,
    PRUEGEL,
    SCHNORRER,
    TRINK,
    ZAPFENSTREICH,
    beers,
)

#: A tray with this many beers is worth drinking at once.
DRINK_AT = 10
#: Worth of playing an action card that has no target (SCHNORRER without victims aside,
#: a SCHNORRER always robs someone).
UNTARGETED_WORTH: dict[str, float] = {
    SCHNORRER: 4, TRINK: -3, FLORA: -3, ZAPFENSTREICH: -3, PRUEGEL: -6,
}


def choose(view: View) -> Action:
    """The policy's action for ``view["seat"]``; ``view["legal"]`` must not be empty."""
    legal: list[Action] = view["legal"]
    if view["phase"] == "respond":
        return _answer(view, legal)
    best: Action = max(legal, key=lambda action: _worth(action, view))
    return dict(best)


def _tray_beers(view: View, tray_id: str | None) -> int:
    return next((beers(tray["cards"]) for tray in view["trays"] if tray["id"] == tray_id), 0)


def _worth(action: Action, view: View) -> float:
    """Beers gained or denied, roughly; drinking is urgent for big trays or near the end."""
    kind = action["type"]
    if kind == "pass":
        return 0
    if kind in ("lay", "extend"):
        return beers(action["cards"]) + (3 if kind == "extend" else 0)
    card = action["card"]
    if "tray" not in action:
        return UNTARGETED_WORTH[card]
    at_stake = _tray_beers(view, action["tray"])
    if card == TRINK:
        ending = view["talon_size"] <= 2 * len(view["hand_sizes"])
        return at_stake * (3 if ending or at_stake >= DRINK_AT else 0.5)
    if card == FLORA:
        return at_stake * 1.5
    return at_stake * 0.8 - 2


def _answer(view: View, legal: list[Action]) -> Action:
    """Defend own trays with PRUEGEL (or spoil them with ZAPFENSTREICH); keep PRUEGEL otherwise."""
    duel = view["duel"]
    cards = {action.get("card") for action in legal}
    at_stake = _tray_beers(view, duel["tray"])
    if duel["kind"] == "flora":
        defending = view["seat"] == duel["victim"]
        if PRUEGEL in cards and at_stake >= (3 if defending else 5):
            return {"type": "respond", "card": PRUEGEL}
        if ZAPFENSTREICH in cards and at_stake >= (6 if defending else 10):
            return {"type": "respond", "card": ZAPFENSTREICH}
    elif view["seat"] == duel["victim"] and view["hand"].count(PRUEGEL) >= 2:
        return {"type": "respond", "card": PRUEGEL}
    return {"type": "pass"}

"""What a seat may do now: the targets of action cards and every distinct legal action."""

from __future__ import annotations

from shared.games.base import Action
from shared.games.wacker.cards import (
    ACTION_COUNTS,
    FLORA,
    PRUEGEL,
    TRINK,
    ZAPFENSTREICH,
)
from shared.games.wacker.state import Phase, Tray, WackerState
from shared.games.wacker.trays import beer_counts, extension_options, lay_options


def targets(state: WackerState, seat: int, card: str) -> list[str]:
    """Ids of the trays ``card`` may name when ``seat`` plays it (empty: no target).

    TRINK takes the seat's own face-up trays; FLORA and ZAPFENSTREICH take
    other seats' face-up trays; the other cards name no tray.
    """
    if card == TRINK:
        return [tray.id for tray in state.face_up() if tray.owner == seat]
    if card in (FLORA, ZAPFENSTREICH):
        return [tray.id for tray in state.face_up() if tray.owner != seat]
    return []


def extensions(tray: Tray, counts: list[int]) -> list[Action]:
    """Every ``extend`` of one tray from a hand with these ``beer_counts``."""
    return [{"type": "extend", "tray": tray.id, "cards": cards}
            for cards in extension_options(tray.cards, counts)]


def turn_actions(state: WackerState, seat: int) -> list[Action]:
    """Lays, extends of own trays, then each held action card with each target."""
    hand = state.hands[seat]
    counts = beer_counts(hand)
    actions: list[Action] = [{"type": "lay", "cards": cards} for cards in lay_options(counts)]
    for tray in state.face_up():
        if tray.owner == seat:
            actions += extensions(tray, counts)
    for card in ACTION_COUNTS:
        if card not in hand:
            continue
        ids = targets(state, seat, card)
        actions += ([{"type": "action", "card": card, "tray": tray_id} for tray_id in ids]
                    or [{"type": "action", "card": card}])
    return actions


def answers(state: WackerState, seat: int) -> list[Action]:
    """Declining first, then each answer card the asked seat holds and may use."""
    duel = state.duel
    assert duel is not None
    hand = state.hands[seat]
    actions: list[Action] = [{"type": "pass"}]
    if PRUEGEL in hand:
        actions.append({"type": "respond", "card": PRUEGEL})
    if ZAPFENSTREICH in hand and duel.kind == "flora":
        actions.append({"type": "respond", "card": ZAPFENSTREICH})
    return actions


def legal_actions(state: WackerState, seat: int, acting: list[int]) -> list[Action]:
    """Every distinct action ``seat`` may take now (``acting``: the seats owing one)."""
    if seat not in acting:
        return []
    if state.phase == Phase.TURN:
        return turn_actions(state, seat)
    if state.phase == Phase.RESPOND:
        return answers(state, seat)
    stolen = state.tray(str(state.stolen_tray))
    assert stolen is not None
    return [{"type": "pass"}, *extensions(stolen, beer_counts(state.hands[seat]))]


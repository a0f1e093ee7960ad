"""Dealing a round: from the seed, or from an explicit setup (conformance scenarios).

A setup fixes, per round, every seat's hand and optionally the top of the
talon; the rest of the deck goes under the listed talon in seed order.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from shared.games.base import derived_rng
from shared.games.errors import SetupError
from shared.games.wacker.cards import DECK, DECK_COUNTS, HAND_SIZE, is_card


def parse_setup(setup: Mapping[str, Any] | None, seats: int) -> list[dict[str, Any]]:
    """Validate ``{"rounds": [{"hands": [...], "talon": [...]}, ...]}``; return the rounds."""
    if setup is None:
        return []
    if not isinstance(setup, Mapping) or set(setup) - {"rounds"}:
        raise SetupError("a Willi Wacker setup is {'rounds': [...]}")
    rounds = setup.get("rounds", [])
    if not isinstance(rounds, list):
        raise SetupError("setup 'rounds' must be a list")
    return [_parse_round(entry, seats, number) for number, entry in enumerate(rounds, 1)]


def _parse_round(entry: object, seats: int, number: int) -> dict[str, Any]:
    where = f"setup round {number}"
    if not isinstance(entry, Mapping) or "hands" not in entry or set(entry) - {"hands", "talon"}:
        raise SetupError(f"{where}: needs 'hands' and may have 'talon'")
    hands, talon = entry["hands"], entry.get("talon", [])
    if not isinstance(hands, list) or len(hands) != seats:
        raise SetupError(f"{where}: 'hands' must list one hand per seat")
    piles = [*hands, talon]
    if not all(isinstance(pile, list) and all(map(is_card, pile)) for pile in piles):
        raise SetupError(f"{where}: hands and talon must be lists of card notations")
    named = Counter(card for pile in piles for card in pile)
    if named - DECK_COUNTS:
        raise SetupError(f"{where}: more copies than the deck holds: {sorted(named - DECK_COUNTS)}")
    # The talon is the listed top plus every card the setup does not name.
    if not talon and sum(named.values()) == len(DECK):
        raise SetupError(f"{where}: the talon must not start empty")
    return {"hands": [list(hand) for hand in hands], "talon": list(talon)}


def deal_round(seed: int, round_no: int, seats: int,
               setup_rounds: list[dict[str, Any]]) -> tuple[list[list[str]], list[str]]:
    """Hands per seat and the talon (top first) for round ``round_no`` (1-based)."""
    deck = list(DECK)
    derived_rng(seed, "deal", round_no).shuffle(deck)
    if round_no > len(setup_rounds):
        hands = [deck[seat * HAND_SIZE:(seat + 1) * HAND_SIZE] for seat in range(seats)]
        return hands, deck[seats * HAND_SIZE:]
    fixed = setup_rounds[round_no - 1]
    rest = Counter(deck) - Counter(card for hand in fixed["hands"] for card in hand) \
        - Counter(fixed["talon"])
    under = []
    for card in deck:
        if rest[card]:
            rest[card] -= 1
            under.append(card)
    return [list(hand) for hand in fixed["hands"]], [*fixed["talon"], *under]

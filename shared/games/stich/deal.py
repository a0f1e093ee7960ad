"""Dealing a round: from an explicit setup (conformance scenarios) or from the seed."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from shared.games.base import derived_rng
from shared.games.errors import SetupError
from shared.games.stich.cards import COPIES, DECK, is_card, sorted_cards
from shared.games.stich.schedule import LAST_ROUND, hand_size, turns_up_trump

#: One listed round: ``{"hands": [[cards] per seat], "turned": card | None}``.
SetupRound = dict[str, Any]


def parse_setup(setup: Mapping[str, Any] | None, seats: int, start_round: int) -> list[SetupRound]:
    """Check an explicit setup and return its rounds (from ``start_round`` on) normalised."""
    if setup is None:
        return []
    if not isinstance(setup, Mapping) or set(setup) - {"rounds"}:
        raise SetupError("setup must be an object with only 'rounds'")
    rounds = setup.get("rounds", [])
    if not isinstance(rounds, list) or len(rounds) > LAST_ROUND - start_round + 1:
        raise SetupError(f"setup 'rounds' must list at most the rounds {start_round}..{LAST_ROUND}")
    return [_parse_round(entry, seats, start_round + i) for i, entry in enumerate(rounds)]


def _parse_round(entry: object, seats: int, round_no: int) -> SetupRound:
    if not isinstance(entry, Mapping) or "hands" not in entry or set(entry) - {"hands", "turned"}:
        raise SetupError(f"round {round_no}: expected an object with 'hands' and 'turned'")
    hands, turned = entry["hands"], entry.get("turned")
    size = hand_size(round_no)
    if not isinstance(hands, list) or len(hands) != seats or not all(
            isinstance(hand, list) and len(hand) == size and all(map(is_card, hand))
            for hand in hands):
        raise SetupError(f"round {round_no}: 'hands' must be {seats} lists of {size} cards")
    if turned is not None and not (is_card(turned) and turns_up_trump(round_no)):
        raise SetupError(f"round {round_no}: 'turned' must be null or a card in a round that "
                         "turns up its trump")
    listed = [card for hand in hands for card in hand] + ([turned] if turned else [])
    overused = sorted(card for card, count in Counter(listed).items() if count > COPIES)
    if overused:
        raise SetupError(f"round {round_no}: more than {COPIES} copies of {', '.join(overused)}")
    return {"hands": [sorted_cards(list(hand)) for hand in hands], "turned": turned}


def deal(seed: int, round_no: int, deal_no: int, order: list[int], seats: int,
         listed: SetupRound | None) -> tuple[list[list[str]], str | None]:
    """Hands per seat (empty for seats not in ``order``) and the turned card, if any.

    ``deal_no`` counts the deals of this round (a redeal after a leave is a new
    deal), so every deal has its own reproducible shuffle.
    """
    rng = derived_rng(seed, "deal", round_no, deal_no)
    size = hand_size(round_no)
    hands: list[list[str]] = [[] for _ in range(seats)]
    if listed is not None:
        for seat in order:
            hands[seat] = list(listed["hands"][seat])
        turned = listed["turned"]
        if turned is None and turns_up_trump(round_no):
            stock = Counter(DECK) - Counter(card for hand in hands for card in hand)
            turned = rng.choice(sorted(stock.elements()))
        return hands, turned
    deck = list(DECK)
    rng.shuffle(deck)
    for index, seat in enumerate(order):
        hands[seat] = sorted_cards(deck[index * size:(index + 1) * size])
    return hands, deck[len(order) * size] if turns_up_trump(round_no) else None

"""Dealing: at every round's start each seat's set becomes three face-down piles of 10.

A conformance ``setup`` may fix the piles of some rounds (``{"rounds": [{"piles":
...}]}``, top card first); rounds it does not list are shuffled from the seed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from shared.games.base import derived_rng
from shared.games.errors import SetupError
from shared.games.record import json_copy
from shared.games.waldi.cards import SET_SIZE, card_sets

ROUNDS = 3
PILES = 3
PILE_SIZE = SET_SIZE // PILES

#: piles[seat][pile] is a list of cards, top card first.
Piles = list[list[list[str]]]


def parse_setup(setup: Mapping[str, Any] | None, seats: int) -> list[Piles]:
    """The explicit piles of the first rounds; SetupError unless each seat gets exactly its set."""
    if not setup:
        return []
    if not isinstance(setup, Mapping) or set(setup) != {"rounds"}:
        raise SetupError("a Wie Waldi setup is {\"rounds\": [...]}")
    rounds = setup["rounds"]
    if not isinstance(rounds, list) or len(rounds) > ROUNDS:
        raise SetupError(f"'rounds' must be a list of at most {ROUNDS} rounds")
    return [_parse_round(entry, seats, index + 1) for index, entry in enumerate(rounds)]


def _parse_round(entry: Any, seats: int, round_no: int) -> Piles:
    if not isinstance(entry, Mapping) or set(entry) != {"piles"}:
        raise SetupError(f"round {round_no}: expected {{\"piles\": [...]}}")
    piles = entry["piles"]
    if not isinstance(piles, list) or len(piles) != seats:
        raise SetupError(f"round {round_no}: 'piles' needs one entry per seat ({seats})")
    sets = card_sets()
    for seat, seat_piles in enumerate(piles):
        if (not isinstance(seat_piles, list) or len(seat_piles) != PILES
                or not all(isinstance(p, list) and len(p) == PILE_SIZE for p in seat_piles)):
            raise SetupError(f"round {round_no}, seat {seat}: {PILES} piles of {PILE_SIZE} cards")
        cards = [card for pile in seat_piles for card in pile]
        valid = all(sets.is_card(card) for card in cards)
        if not valid or Counter(cards) != Counter(sets.sets[seat]):
            raise SetupError(f"round {round_no}, seat {seat}: the piles must be exactly its set")
    piles_copy: Piles = json_copy(piles)
    return piles_copy


def deal_round(seed: int, round_no: int, seats: int, fixed: list[Piles]) -> Piles:
    """The piles of a round: from the setup if it lists the round, else shuffled from the seed."""
    if round_no <= len(fixed):
        listed: Piles = json_copy(fixed[round_no - 1])
        return listed
    piles: Piles = []
    for seat in range(seats):
        cards = list(card_sets().sets[seat])
        derived_rng(seed, "deal", round_no, seat).shuffle(cards)
        piles.append([cards[i * PILE_SIZE:(i + 1) * PILE_SIZE] for i in range(PILES)])
    return piles

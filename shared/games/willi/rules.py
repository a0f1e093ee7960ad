"""Willi's rules as pure functions over cards and seats (no game state).

Kept apart from the engine so that each rule can be read and tested on its
own; the engine only decides *when* each of them applies.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from shared.games.willi.cards import colour, same_colour_or_value, value

#: Table positions: four seats, with 3 people the card monster sits at 3.
POSITIONS = 4
MONSTER = 3
ROUNDS = 8
TRICKS_PER_ROUND = 8
TRICK_LIMIT = 2
MONSTER_BONUS = 12
#: Point card for a unique sum by its place (1 = highest).
AWARD_BY_PLACE = {1: 3, 2: 1, 3: 0, 4: 2}


def playable(hand: Sequence[str], lead: str | None) -> list[str]:
    """Cards a person may play: any card when leading or unable to follow."""
    if lead is None:
        return list(hand)
    following = [card for card in hand if same_colour_or_value(card, lead)]
    return following or list(hand)


def call_window(played_by: Sequence[int], askable: Collection[int]) -> list[int]:
    """Who is asked for "Meinz", in order, after the last card of ``played_by``.

    The seat that just played answers first, then the earlier players in play
    order; after the 4th card nobody may call. Seats outside ``askable`` (two
    tricks already, or the monster) are skipped.
    """
    if not 0 < len(played_by) < POSITIONS:
        return []
    order = [played_by[-1], *played_by[:-1]]
    return [seat for seat in order if seat in askable]


def lowest_card_winner(trick: Sequence[tuple[int, str]], contenders: Collection[int]) -> int:
    """The seat whose card is lowest among ``contenders``; of equal values the later one.

    Seats that already hold two tricks are left out of ``contenders`` by the
    caller, so their cards are ignored as the rulebook demands.
    """
    best_seat, best_value = -1, 10
    for seat, card in trick:
        if seat in contenders and value(card) <= best_value:
            best_seat, best_value = seat, value(card)
    if best_seat < 0:
        raise ValueError("no seat in the trick may still take it")
    return best_seat


def can_exchange(hand: Sequence[str], trick_cards: Sequence[str]) -> bool:
    """True when some hand card shares a colour with some trick card."""
    return not {colour(card) for card in hand}.isdisjoint(colour(card) for card in trick_cards)


def exchange_pairs(hand: Sequence[str], trick_cards: Sequence[str]) -> list[tuple[str, str]]:
    """Every (give, take) swap of a hand card for a same-coloured trick card."""
    return [(give, take) for give in hand for take in trick_cards if colour(give) == colour(take)]


def awards(sums: Sequence[int]) -> list[int]:
    """Point cards of a round: shared sums get nothing, unique ones by their place."""
    result = []
    for own in sums:
        if sums.count(own) > 1:
            result.append(0)
        else:
            place = 1 + sum(1 for other in sums if other > own)
            result.append(AWARD_BY_PLACE[place])
    return result


def start_position(round_no: int, people: int) -> int:
    """Who leads the round: seat 0 (4 people) or the monster (3 people) first, then leftwards."""
    first = 0 if people == POSITIONS else MONSTER
    return (first + round_no - 1) % POSITIONS


def game_winners(scores: Sequence[int], people: int) -> list[int]:
    """The people with the most points; the monster's points are set aside."""
    best = max(scores[:people])
    return [seat for seat in range(people) if scores[seat] == best]

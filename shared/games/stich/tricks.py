"""Following suit and deciding who wins a trick."""

from __future__ import annotations

from typing import Any

from shared.games.stich.cards import rank_of, sorted_cards, suit_of

#: A card on the table as stored and shown: ``[seat, card]``.
PlayedCard = list[Any]


def playable(hand: list[str], led_suit: str | None) -> list[str]:
    """The distinct cards a hand may play: the led suit if it holds any, else anything."""
    following = [card for card in hand if led_suit is not None and suit_of(card) == led_suit]
    return sorted_cards(list(set(following or hand)))


def beats(card: str, best: str, trump: str | None) -> bool:
    """Whether ``card`` played later takes the trick from ``best``.

    Only a strictly higher card of the same suit, or a trump on a non-trump,
    beats the current best; so of two identical cards the first one stays best.
    """
    if suit_of(card) == suit_of(best):
        return rank_of(card) > rank_of(best)
    return suit_of(card) == trump


def trick_winner(trick: list[PlayedCard], trump: str | None) -> int:
    """The seat whose card takes a trick of [seat, card] pairs in playing order."""
    best_seat, best_card = trick[0]
    for seat, card in trick[1:]:
        if beats(card, best_card, trump):
            best_seat, best_card = seat, card
    return int(best_seat)

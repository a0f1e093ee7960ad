"""The Willi rules engine behind the uniform :class:`~shared.games.base.Game` interface.

Phases of a round: ``discard`` (every person, any order) -> ``play`` with
``call`` windows after cards 1..3 of a trick and an ``exchange`` for the trick
winner -> next trick ... -> next round (or ``over`` after round 8). With three
people the card monster sits at position 3 and is moved by the engine itself
inside :meth:`Willi.apply`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from shared.games.base import Action, Event, View
from shared.games.engine import Engine, Move
from shared.games.errors import ErrorCode, RuleError
from shared.games.record import json_copy
from shared.games.willi.cards import colour, is_card, sorted_hand
from shared.games.willi.deal import deal_round, parse_setup
from shared.games.willi.rules import (
    MONSTER,
    MONSTER_BONUS,
    POSITIONS,
    ROUNDS,
    TRICK_LIMIT,
    TRICKS_PER_ROUND,
    awards,
    call_window,
    can_exchange,
    exchange_pairs,
    game_winners,
    lowest_card_winner,
    playable,
    start_position,
)
from shared.games.willi.state import FinishedTrick, Phase, WilliState


class Willi(Engine[WilliState], game="willi"):
    """A game of Willi for 4 people, or 3 people and the card monster."""

    @classmethod
    def initial_state(cls, seats: int, options: dict[str, Any], seed: int,
                      setup: Mapping[str, Any] | None) -> WilliState:
        """Willi has no options; the setup may fix the deals of some rounds."""
        return WilliState(people=seats, seed=seed, deals=parse_setup(setup), round=1,
                          phase=Phase.DISCARD, hands=[], discards=[], leader=0)

    def start(self) -> None:
        """Deal round 1."""
        self._start_round()

    # -- queries ----------------------------------------------------------------

    def tricks_taken(self) -> list[int]:
        """Tricks won this round, per position (exchange still pending included)."""
        counts = [0] * POSITIONS
        for trick in self.state.finished:
            counts[trick.winner] += 1
        return counts

    def to_act(self) -> list[int]:
        """Seats that owe a decision now; never the monster, which acts by itself."""
        state = self.state
        if state.phase == Phase.DISCARD:
            return [seat for seat in range(state.people) if state.discards[seat] is None]
        if state.phase == Phase.PLAY:
            return [self._turn()]
        if state.phase == Phase.CALL:
            return [state.asking[0]]
        if state.phase == Phase.EXCHANGE:
            return [state.finished[-1].winner]
        return []

    def legal_actions(self, seat: int) -> list[Action]:
        """Every action the seat may take now; empty when it owes nothing."""
        if seat not in self.to_act():
            return []
        state, hand = self.state, self.state.hands[seat]
        if state.phase == Phase.DISCARD:
            return [{"type": "discard", "card": card} for card in hand]
        if state.phase == Phase.PLAY:
            return [{"type": "play", "card": card} for card in playable(hand, self._lead())]
        if state.phase == Phase.CALL:
            return [{"type": "meinz"}, {"type": "pass"}]
        swaps = exchange_pairs(hand, [card for _, card in state.trick])
        return [{"type": "pass"}] + [{"type": "exchange", "give": give, "take": take}
                                     for give, take in swaps]

    def seat_view(self, seat: int | None) -> View:
        """Own hand only (a spectator sees none) and own legal actions."""
        return {
            "seat": seat,
            "legal": [] if seat is None else self.legal_actions(seat),
            "hands": [list(hand) if owner == seat else None
                      for owner, hand in enumerate(self.state.hands)],
        }

    def public_view(self) -> View:
        """The table, hand sizes, tricks and results."""
        state = self.state
        return {
            "game": self.name,
            "people": state.people,
            "monster": MONSTER if state.people < POSITIONS else None,
            "round": state.round,
            "phase": state.phase,
            "to_act": self.to_act(),
            "start_player": start_position(state.round, state.people),
            "leader": state.leader,
            "hand_sizes": [len(hand) for hand in state.hands],
            "discarded": [card is not None for card in state.discards],
            "trick": json_copy(state.trick),
            "caller": state.caller,
            "tricks_taken": self.tricks_taken(),
            "trick_winners": [trick.winner for trick in state.finished],
            "tricks": json_copy(state.finished),
            "scores": list(state.scores),
            "completed_rounds": json_copy(state.completed_rounds),
            "over": self.over,
            "winners": self.winners(),
        }

    def summary(self) -> dict[str, Any]:
        """The conformance state summary (full information; ``visible`` from the views)."""
        state = self.state
        return {
            "round": state.round,
            "phase": state.phase,
            "to_act": self.to_act(),
            "hands": json_copy(state.hands),
            "trick": json_copy(state.trick),
            "caller": state.caller,
            "tricks_taken": self.tricks_taken(),
            "trick_winners": [trick.winner for trick in state.finished],
            "scores": list(state.scores),
            "completed_rounds": json_copy(state.completed_rounds),
            "over": self.over,
            "winners": self.winners(),
            "visible": [self.view(seat)["hands"] for seat in range(state.people)],
        }

    # -- actions ----------------------------------------------------------------

    def apply(self, seat: int, action: Mapping[str, Any]) -> list[Event]:
        """Check and carry out the action (see :class:`Engine`), then let the monster move."""
        return super().apply(seat, action) + self._run_monster()

    def _named_cards(self, seat: int, action: Mapping[str, Any]) -> Mapping[str, Any]:
        """Refuse card fields that are not cards in notation (INVALID_ACTION)."""
        for name, named in action.items():
            if name != "type" and not is_card(named):
                raise RuleError(ErrorCode.INVALID_ACTION, f"'{named}' is not a card")
        return action

    def _in_hand(self, seat: int, card: str) -> list[str]:
        """The seat's hand, if it holds ``card`` (else CARD_NOT_IN_HAND)."""
        hand = self.state.hands[seat]
        if card not in hand:
            raise RuleError(ErrorCode.CARD_NOT_IN_HAND, f"{card} is not in the hand")
        return hand

    def _discard(self, seat: int, action: Mapping[str, Any]) -> list[Event]:
        state = self.state
        self._in_hand(seat, action["card"]).remove(action["card"])
        state.discards[seat] = action["card"]
        events: list[Event] = [{"type": "discarded", "seat": seat}]
        if not self.to_act():
            state.phase = Phase.PLAY
            events.append({"type": "play_started", "round": state.round, "leader": state.leader})
        return events

    def _play(self, seat: int, action: Mapping[str, Any]) -> list[Event]:
        card = action["card"]
        if card not in playable(self._in_hand(seat, card), self._lead()):
            raise RuleError(ErrorCode.MUST_FOLLOW,
                            f"{card} matches neither colour nor number of {self._lead()}")
        return self._play_card(seat, card)

    def _meinz(self, seat: int, action: Mapping[str, Any]) -> list[Event]:
        state = self.state
        state.caller, state.asking, state.phase = seat, [], Phase.PLAY
        return [{"type": "meinz", "seat": seat}]

    def _pass(self, seat: int, action: Mapping[str, Any]) -> list[Event]:
        state = self.state
        if state.phase == Phase.EXCHANGE:
            return [{"type": "no_exchange", "seat": seat}, *self._clear_table()]
        state.asking.pop(0)
        if not state.asking:
            state.phase = Phase.PLAY
        return [{"type": "passed", "seat": seat}]

    def _exchange(self, seat: int, action: Mapping[str, Any]) -> list[Event]:
        state = self.state
        give, take = action["give"], action["take"]
        hand = self._in_hand(seat, give)
        if take not in [card for _, card in state.trick]:
            raise RuleError(ErrorCode.CARD_NOT_IN_HAND, f"{take} is not in the trick")
        if colour(give) != colour(take):
            raise RuleError(ErrorCode.NOT_ALLOWED,
                            f"{give} and {take} differ in colour: only same colours swap")
        hand.remove(give)
        state.hands[seat] = sorted_hand([*hand, take])
        state.finished[-1].exchange = (give, take)
        return [{"type": "exchanged", "seat": seat, "give": give, "take": take},
                *self._clear_table()]

    moves = {
        "discard": Move(_discard, {"card": str}, parse=_named_cards,
                        phases=frozenset({Phase.DISCARD})),
        "play": Move(_play, {"card": str}, parse=_named_cards, phases=frozenset({Phase.PLAY})),
        "meinz": Move(_meinz, phases=frozenset({Phase.CALL})),
        "pass": Move(_pass, phases=frozenset({Phase.CALL, Phase.EXCHANGE})),
        "exchange": Move(_exchange, {"give": str, "take": str}, parse=_named_cards,
                         phases=frozenset({Phase.EXCHANGE})),
    }

    # -- flow -------------------------------------------------------------------

    def _turn(self) -> int:
        """The position to play the next card of the trick."""
        return (self.state.leader + len(self.state.trick)) % POSITIONS

    def _lead(self) -> str | None:
        """The first card of the trick on the table, if any."""
        return self.state.trick[0][1] if self.state.trick else None

    def _run_monster(self) -> list[Event]:
        """Play the monster's top card whenever it is its turn (it never follows suit)."""
        events: list[Event] = []
        state = self.state
        while state.people < POSITIONS and state.phase == Phase.PLAY and self._turn() == MONSTER:
            events += self._play_card(MONSTER, state.hands[MONSTER][0])
        return events

    def _play_card(self, seat: int, card: str) -> list[Event]:
        """Put a card on the trick, then open a Meinz window or finish the trick."""
        state = self.state
        state.hands[seat].remove(card)
        state.trick.append((seat, card))
        events: list[Event] = [{"type": "played", "seat": seat, "card": card}]
        if len(state.trick) == POSITIONS:
            return events + self._finish_trick()
        taken = self.tricks_taken()
        askable = {s for s in range(state.people) if taken[s] < TRICK_LIMIT}
        window = [] if state.caller is not None else call_window(
            [player for player, _ in state.trick], askable)
        state.asking = window
        state.phase = Phase.CALL if window else Phase.PLAY
        return events

    def _finish_trick(self) -> list[Event]:
        """Give the trick to the caller or the lowest card; offer the exchange if possible."""
        state = self.state
        taken = self.tricks_taken()
        contenders = {s for s in range(POSITIONS) if taken[s] < TRICK_LIMIT}
        winner = state.caller if state.caller is not None else lowest_card_winner(
            state.trick, contenders)
        state.finished.append(FinishedTrick(list(state.trick), winner, state.caller))
        events: list[Event] = [{"type": "trick_won", "seat": winner, "trick": len(state.finished),
                                "called": state.caller is not None}]
        if winner < state.people and can_exchange(state.hands[winner],
                                                   [card for _, card in state.trick]):
            state.phase = Phase.EXCHANGE
            return events
        return events + self._clear_table()

    def _clear_table(self) -> list[Event]:
        """Move the trick to its winner's pile; the winner leads next, or the round ends."""
        state = self.state
        winner = state.finished[-1].winner
        state.trick, state.caller = [], None
        if len(state.finished) == TRICKS_PER_ROUND:
            return self._end_round()
        state.leader, state.phase = winner, Phase.PLAY
        return []

    def _end_round(self) -> list[Event]:
        """Score the round; start the next one or end the game."""
        state = self.state
        sums = [sum(trick.points() for trick in state.finished if trick.winner == seat)
                for seat in range(POSITIONS)]
        if state.people < POSITIONS:
            sums[MONSTER] += MONSTER_BONUS
        points = awards(sums)
        state.scores = [total + gained for total, gained in zip(state.scores, points, strict=True)]
        result = {"sums": sums, "awards": points,
                  "trick_winners": [trick.winner for trick in state.finished]}
        state.completed_rounds.append(result)
        events: list[Event] = [{"type": "round_over", "round": state.round, **result,
                                "scores": list(state.scores)}]
        if state.round == ROUNDS:
            state.phase = Phase.OVER
            state.winners = game_winners(state.scores, state.people)
            return [*events, {"type": "game_over", "winners": list(state.winners),
                              "scores": list(state.scores)}]
        state.round += 1
        return events + self._start_round()

    def _start_round(self) -> list[Event]:
        """Deal the round; people sort their hands, the monster's stack keeps its order."""
        state = self.state
        hands = deal_round(state.seed, state.round, state.deals)
        state.hands = [hand if seat == MONSTER and state.people < POSITIONS else sorted_hand(hand)
                       for seat, hand in enumerate(hands)]
        state.discards = [None] * POSITIONS
        state.leader = start_position(state.round, state.people)
        state.trick, state.caller, state.asking, state.finished = [], None, [], []
        state.phase = Phase.DISCARD
        return [{"type": "round_started", "round": state.round, "start_player": state.leader}]

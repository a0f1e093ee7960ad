"""The Willi rules engine behind the uniform :class:`~shared.games.base.Game` interface.

Phases of a round: ``discard`` (every person, any order) -> ``play`` with
``call`` windows after cards 1..3 of a trick and an ``exchange`` for the trick
winner -> next trick ... -> next round (or ``over`` after round 8). With three
people the card monster sits at position 3 and is moved by the engine itself
inside :meth:`Willi.apply`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from shared.games.base import (
    Action,
    Event,
    Game,
    View,
    check_options,
    check_seat_count,
    require_fields,
)
from shared.games.errors import ErrorCode, RuleError, SetupError
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
from shared.games.willi.state import FinishedTrick, WilliState, copy_results

#: Fields of each action type (besides "type"); card fields use card notation.
#: Each type is carried out by the method ``_<type>`` once it has been verified.
ACTION_FIELDS: dict[str, dict[str, type]] = {
    "discard": {"card": str},
    "play": {"card": str},
    "meinz": {},
    "pass": {},
    "exchange": {"give": str, "take": str},
}
#: Which action types each phase accepts.
PHASE_ACTIONS: dict[str, frozenset[str]] = {
    "discard": frozenset({"discard"}),
    "play": frozenset({"play"}),
    "call": frozenset({"meinz", "pass"}),
    "exchange": frozenset({"exchange", "pass"}),
    "over": frozenset(),
}


class Willi(Game):
    """A game of Willi for 4 people, or 3 people and the card monster."""

    name = "willi"
    min_seats = 3
    max_seats = 4

    def __init__(self, state: WilliState) -> None:
        self.state = state

    # -- creation and storage -------------------------------------------------

    @classmethod
    def new(cls, seats: int, options: Mapping[str, Any] | None = None, seed: int = 0,
            setup: Mapping[str, Any] | None = None) -> Willi:
        """Deal round 1 from the setup or the seed; Willi has no options."""
        people = check_seat_count(cls, seats)
        check_options(options, {})
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise SetupError(f"seed must be an integer, got {seed!r}")
        state = WilliState(people=people, seed=seed, deals=parse_setup(setup), round=1,
                           phase="discard", hands=[], discards=[], leader=0)
        game = cls(state)
        game._start_round()
        return game

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Willi:
        """Restore a game stored by :meth:`to_dict`."""
        return cls(WilliState.from_dict(data))

    def to_dict(self) -> dict[str, Any]:
        """The complete state, hidden cards included (for storage, never for players)."""
        return self.state.to_dict()

    # -- queries ----------------------------------------------------------------

    @property
    def seat_count(self) -> int:
        """People at the table (the monster is not one of them)."""
        return self.state.people

    @property
    def over(self) -> bool:
        """True after round 8 has been scored."""
        return self.state.phase == "over"

    def winners(self) -> list[int]:
        """People with the most points once over."""
        return list(self.state.winners)

    def tricks_taken(self) -> list[int]:
        """Tricks won this round, per position (exchange still pending included)."""
        counts = [0] * POSITIONS
        for trick in self.state.finished:
            counts[trick.winner] += 1
        return counts

    def to_act(self) -> list[int]:
        """Seats that owe a decision now; never the monster, which acts by itself."""
        state = self.state
        if state.phase == "discard":
            return [seat for seat in range(state.people) if state.discards[seat] is None]
        if state.phase == "play":
            return [self._turn()]
        if state.phase == "call":
            return [state.asking[0]]
        if state.phase == "exchange":
            return [state.finished[-1].winner]
        return []

    def legal_actions(self, seat: int) -> list[Action]:
        """Every action the seat may take now; empty when it owes nothing."""
        if seat not in self.to_act():
            return []
        state, hand = self.state, self.state.hands[seat]
        if state.phase == "discard":
            return [{"type": "discard", "card": card} for card in hand]
        if state.phase == "play":
            return [{"type": "play", "card": card} for card in playable(hand, self._lead())]
        if state.phase == "call":
            return [{"type": "meinz"}, {"type": "pass"}]
        swaps = exchange_pairs(hand, [card for _, card in state.trick])
        return [{"type": "pass"}] + [{"type": "exchange", "give": give, "take": take}
                                     for give, take in swaps]

    def view(self, seat: int | None) -> View:
        """What ``seat`` (``None``: a spectator) may know: own hand, the table, results."""
        if seat is not None:
            self.check_seat(seat)
        state = self.state
        return {
            "game": self.name,
            "seat": seat,
            "legal": [] if seat is None else self.legal_actions(seat),
            "people": state.people,
            "monster": MONSTER if state.people < POSITIONS else None,
            "round": state.round,
            "phase": state.phase,
            "to_act": self.to_act(),
            "start_player": start_position(state.round, state.people),
            "leader": state.leader,
            "hands": [list(hand) if owner == seat else None
                      for owner, hand in enumerate(state.hands)],
            "hand_sizes": [len(hand) for hand in state.hands],
            "discarded": [card is not None for card in state.discards],
            "trick": [[player, card] for player, card in state.trick],
            "caller": state.caller,
            "tricks_taken": self.tricks_taken(),
            "trick_winners": [trick.winner for trick in state.finished],
            "tricks": [trick.to_dict() for trick in state.finished],
            "scores": list(state.scores),
            "completed_rounds": copy_results(self.state.completed_rounds),
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
            "hands": [list(hand) for hand in state.hands],
            "trick": [[player, card] for player, card in state.trick],
            "caller": state.caller,
            "tricks_taken": self.tricks_taken(),
            "trick_winners": [trick.winner for trick in state.finished],
            "scores": list(state.scores),
            "completed_rounds": copy_results(self.state.completed_rounds),
            "over": self.over,
            "winners": self.winners(),
            "visible": [self.view(seat)["hands"] for seat in range(state.people)],
        }

    # -- actions ----------------------------------------------------------------

    def apply(self, seat: int, action: Mapping[str, Any]) -> list[Event]:
        """Check the action completely, then carry it out and let the monster move."""
        kind = self._parse(seat, action)
        self._verify(seat, kind, action)
        handler: Callable[[int, Mapping[str, Any]], list[Event]] = getattr(self, f"_{kind}")
        return handler(seat, action) + self._run_monster()

    def _parse(self, seat: int, action: Mapping[str, Any]) -> str:
        """Refuse malformed actions (INVALID_ACTION); return the action type."""
        self.check_seat(seat)
        if not isinstance(action, Mapping):
            raise RuleError(ErrorCode.INVALID_ACTION, "an action is an object")
        kind = action.get("type")
        if not isinstance(kind, str) or kind not in ACTION_FIELDS:
            raise RuleError(ErrorCode.INVALID_ACTION, f"unknown action type {kind!r}")
        require_fields(action, ACTION_FIELDS[kind])
        for name in ACTION_FIELDS[kind]:
            if not is_card(action[name]):
                raise RuleError(ErrorCode.INVALID_ACTION, f"'{action[name]}' is not a card")
        return kind

    def _verify(self, seat: int, kind: str, action: Mapping[str, Any]) -> None:
        """Refuse actions the rules forbid now, in the codes' precedence order."""
        state = self.state
        if self.over:
            raise RuleError(ErrorCode.GAME_OVER, "the game is over")
        if kind not in PHASE_ACTIONS[state.phase]:
            raise RuleError(ErrorCode.WRONG_PHASE, f"no {kind} in the {state.phase} phase")
        if seat not in self.to_act():
            raise RuleError(ErrorCode.NOT_YOUR_TURN, f"seat {seat} does not act now")
        hand = state.hands[seat]
        if kind in ("discard", "play") and action["card"] not in hand:
            raise RuleError(ErrorCode.CARD_NOT_IN_HAND, f"{action['card']} is not in the hand")
        if kind == "play" and action["card"] not in playable(hand, self._lead()):
            raise RuleError(ErrorCode.MUST_FOLLOW,
                            f"{action['card']} matches neither colour nor number of {self._lead()}")
        if kind == "exchange":
            give, take = action["give"], action["take"]
            if give not in hand:
                raise RuleError(ErrorCode.CARD_NOT_IN_HAND, f"{give} is not in the hand")
            if take not in [card for _, card in state.trick]:
                raise RuleError(ErrorCode.CARD_NOT_IN_HAND, f"{take} is not in the trick")
            if colour(give) != colour(take):
                raise RuleError(ErrorCode.NOT_ALLOWED,
                                f"{give} and {take} differ in colour: only same colours swap")

    def _discard(self, seat: int, action: Mapping[str, Any]) -> list[Event]:
        state = self.state
        state.hands[seat].remove(action["card"])
        state.discards[seat] = action["card"]
        events: list[Event] = [{"type": "discarded", "seat": seat}]
        if not self.to_act():
            state.phase = "play"
            events.append({"type": "play_started", "round": state.round, "leader": state.leader})
        return events

    def _play(self, seat: int, action: Mapping[str, Any]) -> list[Event]:
        return self._play_card(seat, action["card"])

    def _meinz(self, seat: int, action: Mapping[str, Any]) -> list[Event]:
        state = self.state
        state.caller, state.asking, state.phase = seat, [], "play"
        return [{"type": "meinz", "seat": seat}]

    def _pass(self, seat: int, action: Mapping[str, Any]) -> list[Event]:
        state = self.state
        if state.phase == "exchange":
            return [{"type": "no_exchange", "seat": seat}, *self._clear_table()]
        state.asking.pop(0)
        if not state.asking:
            state.phase = "play"
        return [{"type": "passed", "seat": seat}]

    def _exchange(self, seat: int, action: Mapping[str, Any]) -> list[Event]:
        state = self.state
        give, take = action["give"], action["take"]
        hand = state.hands[seat]
        hand.remove(give)
        state.hands[seat] = sorted_hand([*hand, take])
        state.finished[-1].exchange = (give, take)
        return [{"type": "exchanged", "seat": seat, "give": give, "take": take},
                *self._clear_table()]

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
        while state.people < POSITIONS and state.phase == "play" and self._turn() == MONSTER:
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
        state.phase = "call" if window else "play"
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
            state.phase = "exchange"
            return events
        return events + self._clear_table()

    def _clear_table(self) -> list[Event]:
        """Move the trick to its winner's pile; the winner leads next, or the round ends."""
        state = self.state
        winner = state.finished[-1].winner
        state.trick, state.caller = [], None
        if len(state.finished) == TRICKS_PER_ROUND:
            return self._end_round()
        state.leader, state.phase = winner, "play"
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
            state.phase = "over"
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
        state.phase = "discard"
        return [{"type": "round_started", "round": state.round, "start_player": state.leader}]

"""The Willi Stich rules engine: deal, trump, calls with the dealer rule, tricks, leaving.

Every action is validated completely before anything changes, so a refused
action leaves the state as it was. See RULES.md beside this file for the rules
and rulings this implements.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from shared.games.base import Action, Event, View, require_fields
from shared.games.engine import Engine, Move
from shared.games.errors import ErrorCode, RuleError, SetupError
from shared.games.record import json_copy
from shared.games.stich.cards import SUITS, is_card, suit_of
from shared.games.stich.deal import deal, parse_setup
from shared.games.stich.schedule import LAST_ROUND, RoundKind, hand_size, round_kind
from shared.games.stich.scoring import best_seats, round_points
from shared.games.stich.state import Phase, StichState
from shared.games.stich.tricks import playable, trick_winner

#: Longest chat message accepted, in characters.
MAX_CHAT_LENGTH = 200
#: The game goes on while at least this many seats remain.
MIN_REMAINING = 2


class WilliStich(Engine[StichState], game="willi-stich"):
    """One game of Willi Stich for 3 to 6 seats."""

    @classmethod
    def initial_state(cls, seats: int, options: dict[str, Any], seed: int,
                      setup: Mapping[str, Any] | None) -> StichState:
        """Check the start round and first dealer; the setup may fix the first deals."""
        start, first = options["start_round"], options["first_dealer"]
        if not isinstance(start, int) or not 1 <= start <= LAST_ROUND:
            raise SetupError(f"option 'start_round' must be 1..{LAST_ROUND}")
        if not isinstance(first, int) or not 0 <= first < seats:
            raise SetupError(f"option 'first_dealer' must be a seat 0..{seats - 1}")
        return StichState(
            seats=seats, seed=seed, start_round=start,
            setup_rounds=parse_setup(setup, seats, start), round=start, dealer=first,
            deal_no=0, phase=Phase.CALL, turn=None, trump=None, turned=None,
            hands=[[] for _ in range(seats)], calls=[None] * seats, tricks_taken=[0] * seats,
            trick=[], played_tricks=[], active=[True] * seats, scores=[0] * seats,
            completed_rounds=[], winners=[])

    def start(self) -> None:
        """Deal the first round played."""
        self._deal_round()

    # ---------------------------------------------------------------- queries

    def to_act(self) -> list[int]:
        """The one seat that owes a decision (dealer's trump, a call or a card)."""
        return [] if self.state.turn is None else [self.state.turn]

    def legal_actions(self, seat: int) -> list[Action]:
        """Every distinct trump, call or play ``seat`` may make now.

        ``leave`` and ``chat`` are always open to a seat still in (chat not in the
        forehead round) and are left out on purpose: they are not moves of the
        game, and bots and turn clocks must never pick them.
        """
        s = self.state
        if seat != s.turn:
            return []
        if s.phase == Phase.CHOOSE_TRUMP:
            return [{"type": "trump", "suit": suit} for suit in SUITS]
        if s.phase == Phase.CALL:
            return [{"type": "call", "tricks": tricks} for tricks in range(hand_size(s.round) + 1)
                    if not self._breaks_dealer_rule(seat, tricks)]
        if self._kind is RoundKind.FOREHEAD:
            return [{"type": "play"}]
        return [{"type": "play", "card": card} for card in playable(s.hands[seat], self._led_suit)]

    def default_action(self, seat: int) -> Action | None:
        """Like the base rule, but a dealer who lets the clock run names their longest suit."""
        if seat == self.state.turn and self.state.phase == Phase.CHOOSE_TRUMP:
            counts = Counter(suit_of(card) for card in self.state.hands[seat])
            return {"type": "trump", "suit": max(SUITS, key=lambda suit: counts[suit])}
        return super().default_action(seat)

    def seat_view(self, seat: int | None) -> View:
        """The hands ``seat`` may see (a spectator: none), own legal actions, whether it may chat."""
        s = self.state
        shown = self._visible_owners(seat)
        hands = [list(hand) if owner in shown else None for owner, hand in enumerate(s.hands)]
        return {
            "seat": seat,
            "hands": hands,
            "hand": None if seat is None else hands[seat],
            "chat_allowed": (seat is not None and s.active[seat] and not self.over
                             and self._kind is not RoundKind.FOREHEAD),
            "legal": [] if seat is None else self.legal_actions(seat),
        }

    def public_view(self) -> View:
        """The round, trump, calls, tricks, hand counts and scores."""
        s = self.state
        kind, over = self._kind, self.over
        return {
            "game": self.name,
            "round": s.round,
            "kind": kind.value,
            "hand_size": hand_size(s.round),
            "dealer": s.dealer,
            "phase": s.phase,
            "to_act": self.to_act(),
            "trump": s.trump,
            "turned": s.turned,
            "calls": list(s.calls),
            "tricks_taken": list(s.tricks_taken),
            "trick": json_copy(s.trick),
            "played_tricks": json_copy(s.played_tricks),
            "hand_counts": [len(hand) for hand in s.hands],
            "active": list(s.active),
            "scores": list(s.scores),
            "completed_rounds": json_copy(s.completed_rounds),
            "over": over,
            "winners": list(s.winners),
            "next_dealer": (s.dealer + 1) % s.seats if over else None,
        }

    def summary(self) -> dict[str, Any]:
        """The conformance state fields; ``visible`` comes from each seat's view."""
        public = self.view(None)
        fields = ("round", "hand_size", "dealer", "phase", "to_act", "trump", "turned", "calls",
                  "tricks_taken", "trick", "played_tricks", "active", "scores",
                  "completed_rounds", "over", "winners", "next_dealer")
        return {
            **{name: public[name] for name in fields},
            "hands": [list(hand) for hand in self.state.hands],
            "visible": [self.view(seat)["hands"] for seat in range(self.state.seats)],
        }

    # ---------------------------------------------------------------- actions

    def _suit(self, seat: int, action: Mapping[str, Any]) -> str:
        if action["suit"] not in SUITS:
            raise RuleError(ErrorCode.INVALID_ACTION, f"no suit {action['suit']!r}")
        return str(action["suit"])

    def _tricks(self, seat: int, action: Mapping[str, Any]) -> int:
        if action["tricks"] < 0:
            raise RuleError(ErrorCode.INVALID_ACTION, "a call cannot be negative")
        return int(action["tricks"])

    def _named_card(self, seat: int, action: Mapping[str, Any]) -> str | None:
        """The card named; in the forehead round nobody sees their own, so none has to be."""
        if self._kind is not RoundKind.FOREHEAD:
            require_fields(action, {"card": str})
        if "card" in action and not is_card(action["card"]):
            raise RuleError(ErrorCode.INVALID_ACTION, f"no card {action['card']!r}")
        return action.get("card")

    def _text(self, seat: int, action: Mapping[str, Any]) -> str:
        text = str(action["text"])
        if not text.strip() or len(text) > MAX_CHAT_LENGTH:
            raise RuleError(ErrorCode.INVALID_ACTION,
                            f"chat text must have 1..{MAX_CHAT_LENGTH} characters")
        return text

    def _choose_trump(self, seat: int, suit: str) -> list[Event]:
        s = self.state
        s.trump, s.phase, s.turn = suit, Phase.CALL, self._next_in(s.dealer)
        return [{"type": "trump", "seat": seat, "suit": suit}]

    def _call(self, seat: int, tricks: int) -> list[Event]:
        s = self.state
        if tricks > hand_size(s.round):
            raise RuleError(ErrorCode.NOT_ALLOWED,
                            f"a call can be at most the {hand_size(s.round)} tricks of the round")
        if self._breaks_dealer_rule(seat, tricks):
            raise RuleError(ErrorCode.NOT_ALLOWED,
                            "dealer rule: the calls must not add up to the number of tricks")
        s.calls[seat] = tricks
        if seat == s.dealer:
            s.phase = Phase.PLAY
        s.turn = self._next_in(seat)
        return [{"type": "call", "seat": seat, "tricks": tricks}]

    def _play(self, seat: int, named: str | None) -> list[Event]:
        s = self.state
        hand = s.hands[seat]
        # A forehead card is played unseen: a named card is not checked against the hand,
        # or refusals would let a seat probe what is on its own forehead.
        card = hand[0] if self._kind is RoundKind.FOREHEAD else str(named)
        if card not in hand:
            raise RuleError(ErrorCode.CARD_NOT_IN_HAND, f"{card} is not in your hand")
        if card not in playable(hand, self._led_suit):
            raise RuleError(ErrorCode.MUST_FOLLOW, f"follow suit: {self._led_suit} was led")
        hand.remove(card)
        s.trick.append([seat, card])
        events: list[Event] = [{"type": "play", "seat": seat, "card": card}]
        if len(s.trick) < sum(s.active):
            s.turn = self._next_in(seat)
            return events
        return events + self._collect_trick()

    def _leave(self, seat: int, action: Mapping[str, Any]) -> list[Event]:
        s = self.state
        if not s.active[seat]:
            raise RuleError(ErrorCode.NOT_ALLOWED, "this seat has already left")
        s.active[seat] = False
        events: list[Event] = [{"type": "leave", "seat": seat, "score": s.scores[seat]},
                               {"type": "round_cancelled", "round": s.round}]
        if sum(s.active) < MIN_REMAINING:
            self._clear_round()
            return events + self._end_game()
        if s.dealer == seat:
            s.dealer = self._next_in(seat)
        s.deal_no += 1
        return events + self._deal_round()

    def _chat(self, seat: int, text: str) -> list[Event]:
        if not self.state.active[seat]:
            raise RuleError(ErrorCode.NOT_ALLOWED, "this seat has left the game")
        if self._kind is RoundKind.FOREHEAD:
            raise RuleError(ErrorCode.NOT_ALLOWED, "no table talk in the forehead round")
        return [{"type": "chat", "seat": seat, "text": text}]

    moves = {
        "trump": Move(_choose_trump, {"suit": str}, parse=_suit,
                      phases=frozenset({Phase.CHOOSE_TRUMP})),
        "call": Move(_call, {"tricks": int}, parse=_tricks, phases=frozenset({Phase.CALL})),
        "play": Move(_play, optional={"card": str}, parse=_named_card,
                     phases=frozenset({Phase.PLAY})),
        # Leaving and table talk are open to every seat in any phase of a running game.
        "leave": Move(_leave, on_turn=False),
        "chat": Move(_chat, {"text": str}, parse=_text, on_turn=False),
    }

    # ------------------------------------------------------------ progression

    def _collect_trick(self) -> list[Event]:
        s = self.state
        winner = trick_winner(s.trick, s.trump)
        s.tricks_taken[winner] += 1
        s.played_tricks.append({"cards": s.trick, "winner": winner})
        events: list[Event] = [{"type": "trick", "winner": winner,
                                "cards": [list(played) for played in s.trick]}]
        s.trick = []
        if any(s.hands):
            s.turn = winner
            return events
        return events + self._finish_round()

    def _finish_round(self) -> list[Event]:
        s = self.state
        points = [round_points(call, taken) if call is not None else 0
                  for call, taken in zip(s.calls, s.tricks_taken, strict=True)]
        s.scores = [score + gained for score, gained in zip(s.scores, points, strict=True)]
        record = {"round": s.round, "calls": list(s.calls), "tricks": list(s.tricks_taken),
                  "points": points}
        s.completed_rounds.append(record)
        events: list[Event] = [{"type": "round_over", **record, "scores": list(s.scores)}]
        if s.round == LAST_ROUND:
            return events + self._end_game()
        s.round += 1
        s.dealer = self._next_in(s.dealer)
        s.deal_no = 0
        return events + self._deal_round()

    def _end_game(self) -> list[Event]:
        s = self.state
        s.phase, s.turn, s.winners = Phase.OVER, None, best_seats(s.scores)
        return [{"type": "game_over", "winners": list(s.winners), "scores": list(s.scores)}]

    def _clear_round(self) -> None:
        s = self.state
        s.hands = [[] for _ in range(s.seats)]
        s.calls = [None] * s.seats
        s.tricks_taken = [0] * s.seats
        s.trick, s.played_tricks, s.trump, s.turned = [], [], None, None

    def _deal_round(self) -> list[Event]:
        """Deal the current round (again, after a leave) to the seats still in."""
        s = self.state
        self._clear_round()
        order, seat = [], s.dealer
        for _ in range(sum(s.active)):
            seat = self._next_in(seat)
            order.append(seat)
        index = s.round - s.start_round
        listed = s.setup_rounds[index] if s.deal_no == 0 and index < len(s.setup_rounds) else None
        s.hands, s.turned = deal(s.seed, s.round, s.deal_no, order, s.seats, listed)
        s.trump = suit_of(s.turned) if s.turned else None
        choosing = self._kind is RoundKind.TRUMP_CHOICE
        s.phase = Phase.CHOOSE_TRUMP if choosing else Phase.CALL
        s.turn = s.dealer if choosing else self._next_in(s.dealer)
        return [{"type": "deal", "round": s.round, "kind": self._kind.value,
                 "hand_size": hand_size(s.round), "dealer": s.dealer, "turned": s.turned}]

    # ---------------------------------------------------------------- helpers

    @property
    def _kind(self) -> RoundKind:
        return round_kind(self.state.round)

    @property
    def _led_suit(self) -> str | None:
        return suit_of(self.state.trick[0][1]) if self.state.trick else None

    def _next_in(self, seat: int) -> int:
        """The next seat clockwise after ``seat`` that is still in the game."""
        s = self.state
        for step in range(1, s.seats + 1):
            candidate = (seat + step) % s.seats
            if s.active[candidate]:
                return candidate
        raise AssertionError("no seat left")

    def _breaks_dealer_rule(self, seat: int, tricks: int) -> bool:
        s = self.state
        others = sum(call for other, call in enumerate(s.calls)
                     if other != seat and call is not None)
        return seat == s.dealer and others + tricks == hand_size(s.round)

    def _visible_owners(self, viewer: int | None) -> set[int]:
        """The one visibility rule: own hand normally; none before the blind calls are made;
        in the forehead round every other hand but not the own. Spectators and seats that
        left see no hand."""
        s = self.state
        if viewer is None or not s.active[viewer]:
            return set()
        if self._kind is RoundKind.FOREHEAD:
            return set(range(s.seats)) - {viewer}
        if self._kind is RoundKind.BLIND and s.phase == Phase.CALL:
            return set()
        return {viewer}

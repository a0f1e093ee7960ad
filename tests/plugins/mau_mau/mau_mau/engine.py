"""The Mau-Mau rules engine behind the uniform :class:`~shared.games.base.Game` interface.

One round: the seat on turn plays a matching card or draws one (and then may
play just that card, or pass), until a seat has no card left. 7s make the next
seat draw two and skip it, 8s skip it, Js are wild and name the suit to follow.
The rules, action vocabulary and rulings are in RULES.md beside this file.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mau_mau.cards import JACK, SEVEN_PENALTY, SUITS, is_card, matches, rank, sorted_hand
from mau_mau.deal import deal
from mau_mau.state import MauMauState, Phase
from shared.games.base import Action, Event, View, derived_rng
from shared.games.engine import Engine, Move
from shared.games.errors import ErrorCode, RuleError

#: Seat 0 deals the one game; the seat to its left begins.
DEALER = 0


class MauMau(Engine[MauMauState], game="mau-mau"):
    """A game of Mau-Mau for 2 to 5 seats."""

    @classmethod
    def initial_state(cls, seats: int, options: dict[str, Any], seed: int,
                      setup: Mapping[str, Any] | None) -> MauMauState:
        """Deal (from the setup, else from the seed) and turn up the first card of the pile."""
        dealt = deal(seats, options["hand_size"], seed, setup)
        return MauMauState(seats=seats, seed=seed, hands=dealt.hands, stock=dealt.stock,
                           pile=[dealt.up], turn=(DEALER + 1) % seats, scores=[0] * seats)

    # -- queries ----------------------------------------------------------------

    @property
    def top(self) -> str:
        """The top card of the discard pile (never empty: it starts with the turned-up card)."""
        return self.state.pile[-1]

    def to_act(self) -> list[int]:
        """The seat on turn, until the game is over."""
        return [] if self.over else [self.state.turn]

    def legal_actions(self, seat: int) -> list[Action]:
        """Phase ``play``: draw, or any matching card (a J once per wish);
        phase ``drawn``: pass, or the drawn card if it matches."""
        if seat not in self.to_act():
            return []
        state = self.state
        if state.phase == Phase.DRAWN:
            first: Action = {"type": "pass"}
            candidates = [state.drawn] if state.drawn else []  # always set in this phase
        else:
            first, candidates = {"type": "draw"}, state.hands[seat]
        plays: list[Action] = []
        for card in candidates:
            if matches(card, self.top, state.wish):
                plays += ([{"type": "play", "card": card, "wish": wish} for wish in SUITS]
                          if rank(card) == JACK else [{"type": "play", "card": card}])
        return [first, *plays]

    def public_view(self) -> View:
        """The top card and wish, pile and stock sizes, hand sizes and the result."""
        state = self.state
        return {
            "game": self.name,
            "round": state.round,
            "dealer": DEALER,
            "phase": state.phase,
            "to_act": self.to_act(),
            "top": self.top,
            "wish": state.wish,
            "pile_size": len(state.pile),
            "stock_size": len(state.stock),
            "hand_sizes": [len(hand) for hand in state.hands],
            "scores": list(state.scores),
            "over": self.over,
            "winners": self.winners(),
        }

    def seat_view(self, seat: int | None) -> View:
        """Own hand only (none for a spectator), the card the seat just drew, its legal actions."""
        state = self.state
        own_turn = seat is not None and seat in self.to_act()
        return {
            "seat": seat,
            "legal": [] if seat is None else self.legal_actions(seat),
            "hand": None if seat is None else list(state.hands[seat]),
            "drawn": state.drawn if own_turn else None,
        }

    def summary(self) -> dict[str, Any]:
        """The conformance state summary (full information)."""
        state = self.state
        return {
            "round": state.round,
            "phase": state.phase,
            "to_act": self.to_act(),
            "hands": [list(hand) for hand in state.hands],
            "top": self.top,
            "wish": state.wish,
            "drawn": state.drawn,
            "pile": list(state.pile),
            "stock": list(state.stock),
            "scores": list(state.scores),
            "over": self.over,
            "winners": self.winners(),
        }

    # -- actions ----------------------------------------------------------------

    def _checked_play(self, seat: int, action: Mapping[str, Any]) -> Mapping[str, Any]:
        """Refuse a card not in notation, a J without a suit wish or a wish with any other
        card (INVALID_ACTION): all of that is the action's shape, whatever the state."""
        card, wish = action["card"], action.get("wish")
        if not is_card(card):
            raise RuleError(ErrorCode.INVALID_ACTION, f"'{card}' is not a card")
        if rank(card) == JACK and wish not in SUITS:
            raise RuleError(ErrorCode.INVALID_ACTION, f"a J needs a 'wish' of {', '.join(SUITS)}")
        if rank(card) != JACK and "wish" in action:
            raise RuleError(ErrorCode.INVALID_ACTION, "only a J takes a 'wish'")
        return action

    def _play(self, seat: int, action: Mapping[str, Any]) -> list[Event]:
        state, card = self.state, action["card"]
        hand = state.hands[seat]
        if card not in hand:
            raise RuleError(ErrorCode.CARD_NOT_IN_HAND, f"{card} is not in the hand")
        if not matches(card, self.top, state.wish):
            wanted = f"the wished suit {state.wish}" if state.wish else f"{self.top}"
            raise RuleError(ErrorCode.NO_MATCH, f"{card} does not match {wanted}")
        if state.phase == Phase.DRAWN and card != state.drawn:
            raise RuleError(ErrorCode.NOT_ALLOWED, f"after drawing only {state.drawn} may be played")
        hand.remove(card)
        state.pile.append(card)
        state.wish, state.drawn, state.phase = action.get("wish"), None, Phase.PLAY
        events: list[Event] = [{"type": "played", "seat": seat, "card": card}]
        if state.wish is not None:
            events.append({"type": "wished", "seat": seat, "suit": state.wish})
        if not hand:
            return events + self._finish(seat)
        following = self._next(seat)
        if rank(card) in ("7", "8"):
            if rank(card) == "7":
                events += self._penalty(following)
            events.append({"type": "skipped", "seat": following})
            following = self._next(following)
        state.turn = following
        return events

    def _draw(self, seat: int, action: Mapping[str, Any]) -> list[Event]:
        state = self.state
        card, events = self._take_from_stock()
        if card is None:
            state.turn = self._next(seat)
            return [*events, {"type": "drew", "seat": seat, "count": 0}]
        state.hands[seat] = sorted_hand([*state.hands[seat], card])
        state.drawn, state.phase = card, Phase.DRAWN
        return [*events, {"type": "drew", "seat": seat, "count": 1}]

    def _pass(self, seat: int, action: Mapping[str, Any]) -> list[Event]:
        state = self.state
        state.drawn, state.phase, state.turn = None, Phase.PLAY, self._next(seat)
        return [{"type": "passed", "seat": seat}]

    moves = {
        "play": Move(_play, {"card": str}, {"wish": str}, parse=_checked_play,
                     phases=frozenset({Phase.PLAY, Phase.DRAWN})),
        "draw": Move(_draw, phases=frozenset({Phase.PLAY})),
        "pass": Move(_pass, phases=frozenset({Phase.DRAWN})),
    }

    # -- flow -------------------------------------------------------------------

    def _next(self, seat: int) -> int:
        """The seat to the left."""
        return (seat + 1) % self.state.seats

    def _take_from_stock(self) -> tuple[str | None, list[Event]]:
        """The stock's top card (None when there is none even after a reshuffle), and the
        ``reshuffled`` event if the pile under the top card had to become the stock first."""
        state = self.state
        events: list[Event] = []
        if not state.stock and len(state.pile) > 1:
            under = state.pile[:-1]
            derived_rng(state.seed, "reshuffle", state.reshuffles).shuffle(under)
            state.stock, state.pile = under, state.pile[-1:]
            state.reshuffles += 1
            events.append({"type": "reshuffled", "count": len(under)})
        return (state.stock.pop(0) if state.stock else None), events

    def _penalty(self, seat: int) -> list[Event]:
        """The seat after a 7 draws two cards (fewer if there are no more)."""
        state = self.state
        events: list[Event] = []
        taken: list[str] = []
        for _ in range(SEVEN_PENALTY):
            card, reshuffled = self._take_from_stock()
            events += reshuffled
            if card is not None:
                taken.append(card)
        state.hands[seat] = sorted_hand([*state.hands[seat], *taken])
        return [*events, {"type": "penalty", "seat": seat, "count": len(taken)}]

    def _finish(self, winner: int) -> list[Event]:
        """``winner`` has no card left: the game ends, every other seat scores minus its cards."""
        state = self.state
        state.phase, state.winners = Phase.OVER, [winner]
        state.scores = [-len(hand) for hand in state.hands]
        return [{"type": "game_over", "winners": [winner], "scores": list(state.scores)}]

"""Wie Waldi: simultaneous real-time dog building, as a pure engine.

Every seat may act at any time; the caller (the arbiter) applies actions one
at a time in the order it receives them, and that order is the game. An
``attach`` may name the dog length its sender saw (``at``) so that a lost race
is refused with ``STALE`` instead of landing on a different end.

The engine has no clock. A server that keeps a round time limit (option
``round_seconds``) calls :meth:`WieWaldi.time_up` when it passes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from shared.games.base import Action, Event, View
from shared.games.engine import Engine, Move
from shared.games.errors import ErrorCode, RuleError, SetupError
from shared.games.record import json_copy
from shared.games.waldi import scoring
from shared.games.waldi.cards import has_cat, is_head, is_tail, left_colour, right_colour
from shared.games.waldi.deal import PILES, ROUNDS, deal_round, parse_setup
from shared.games.waldi.state import Dog, WaldiState

TOKENS = 6
#: The longest round time limit a table may set (the default is in the catalogue).
MAX_ROUND_SECONDS = 3600

#: Why a round ended, as the ``round_over`` event says.
END_STOP, END_DEAD, END_TIME = "stop", "dead_end", "time_up"


class WieWaldi(Engine[WaldiState], game="wie-waldi"):
    """Three rounds of everybody building dachshunds at once."""

    @classmethod
    def initial_state(cls, seats: int, options: dict[str, Any], seed: int,
                      setup: Mapping[str, Any] | None) -> WaldiState:
        """Check the round time limit; deal round 1 from the setup or the seed."""
        limit = options["round_seconds"]
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int | float)
                                  or not 0 < limit <= MAX_ROUND_SECONDS):
            raise SetupError(f"option 'round_seconds' must be a number of seconds above 0 and "
                             f"at most {MAX_ROUND_SECONDS}, or null")
        fixed = parse_setup(setup, seats)
        return WaldiState(
            seats=seats, options=options, seed=seed, fixed_deals=fixed, round=1,
            piles=deal_round(seed, 1, seats, fixed), held=[None] * seats,
            held_from=[None] * seats, dogs=[], tokens_left=[TOKENS] * seats,
            discarded=[[] for _ in range(seats)], scores=[0] * seats, completed_rounds=[],
            over=False, winners=[])

    # -- who may do what --------------------------------------------------------

    def legal_actions(self, seat: int) -> list[Action]:
        """Plays of the held card first, then ``return``; with an empty hand, the draws."""
        s = self.state
        if s.over or not 0 <= seat < s.seats:
            return []
        card = s.held[seat]
        if card is None:
            return [{"type": "draw", "pile": p} for p in range(PILES) if s.piles[seat][p]]
        if is_head(card):
            plays: list[Action] = [{"type": "place_head"}]
        else:
            plays = [{"type": "attach", "dog": dog["id"]} for dog in s.dogs
                     if not dog["complete"] and right_colour(dog["cards"][-1]) == left_colour(card)]
        return [*plays, {"type": "return"}]

    def to_act(self) -> list[int]:
        """Every seat that holds a card or still has a pile to draw from."""
        s = self.state
        if s.over:
            return []
        return [seat for seat in range(s.seats)
                if s.held[seat] is not None or any(s.piles[seat])]

    def default_action(self, seat: int) -> Action | None:
        """Let go of a held card; an empty-handed seat owes nothing in real-time play."""
        let_go: Action = {"type": "return"}
        return let_go if let_go in self.legal_actions(seat) else None

    # -- actions ------------------------------------------------------------------

    def _held_card(self, seat: int, verb: str) -> str:
        card = self.state.held[seat]
        if card is None:
            raise RuleError(ErrorCode.NOT_ALLOWED, f"cannot {verb}: seat {seat} holds no card")
        return card

    def _pile(self, seat: int, action: Mapping[str, Any]) -> int:
        pile = int(action["pile"])
        if not 0 <= pile < PILES:
            raise RuleError(ErrorCode.INVALID_ACTION, f"there is no pile {pile} (0-{PILES - 1})")
        return pile

    def _draw(self, seat: int, pile: int) -> list[Event]:
        s = self.state
        if s.held[seat] is not None:
            raise RuleError(ErrorCode.NOT_ALLOWED, "already holding a card: play or return it")
        if not s.piles[seat][pile]:
            raise RuleError(ErrorCode.NOT_ALLOWED, f"pile {pile} is empty")
        s.held[seat] = s.piles[seat][pile].pop(0)
        s.held_from[seat] = pile
        return [{"type": "draw", "seat": seat, "pile": pile}]

    def _return(self, seat: int, action: Mapping[str, Any]) -> list[Event]:
        s = self.state
        card = self._held_card(seat, "return a card")
        pile = s.held_from[seat]
        assert pile is not None
        s.piles[seat][pile].append(card)
        s.held[seat] = s.held_from[seat] = None
        return [{"type": "return", "seat": seat, "pile": pile}]

    def _place_head(self, seat: int, action: Mapping[str, Any]) -> list[Event]:
        s = self.state
        card = self._held_card(seat, "place a head")
        if not is_head(card):
            raise RuleError(ErrorCode.NOT_ALLOWED, f"only a head starts a dog, not {card}")
        dog: Dog = {"id": f"d{len(s.dogs) + 1}", "cards": [card], "by": [seat],
                    "complete": False, "owner": None}
        s.dogs.append(dog)
        s.held[seat] = s.held_from[seat] = None
        events: list[Event] = [{"type": "place_head", "seat": seat, "card": card, "dog": dog["id"]}]
        return events + self._after_placement(seat)

    def _length_seen(self, seat: int, action: Mapping[str, Any]) -> Mapping[str, Any]:
        at = action.get("at")
        if at is not None and at < 0:
            raise RuleError(ErrorCode.INVALID_ACTION, "'at' is a dog length and cannot be negative")
        return action

    def _attach(self, seat: int, action: Mapping[str, Any]) -> list[Event]:
        at = action.get("at")
        s = self.state
        dog = s.find_dog(action["dog"])
        if dog is None or dog["complete"]:
            state = "is complete" if dog else "is not on the table"
            raise RuleError(ErrorCode.CARD_NOT_IN_HAND, f"dog {action['dog']!r} {state}")
        if at is not None and at != len(dog["cards"]):
            raise RuleError(ErrorCode.STALE, f"dog {dog['id']} has {len(dog['cards'])} cards "
                                             f"now, not {at}")
        card = s.held[seat]  # an empty hand is NOT_ALLOWED, which comes after NO_MATCH
        end = right_colour(dog["cards"][-1])
        if card is not None and not is_head(card) and left_colour(card) != end:
            raise RuleError(ErrorCode.NO_MATCH, f"{card} does not fit the {end} end of {dog['id']}")
        card = self._held_card(seat, "attach")
        if is_head(card):
            raise RuleError(ErrorCode.NOT_ALLOWED, "a head never attaches; place it as a new dog")
        dog["cards"].append(card)
        dog["by"].append(seat)
        s.held[seat] = s.held_from[seat] = None
        events: list[Event] = [{"type": "attach", "seat": seat, "card": card, "dog": dog["id"],
                                "length": len(dog["cards"])}]
        if is_tail(card):
            events.append(self._complete(dog, seat))
        return events + self._after_placement(seat)

    # Every seat may act at any time: no move waits for a turn or a phase.
    moves = {
        "draw": Move(_draw, {"pile": int}, parse=_pile, on_turn=False),
        "return": Move(_return, on_turn=False),
        "place_head": Move(_place_head, on_turn=False),
        "attach": Move(_attach, {"dog": str}, {"at": int}, parse=_length_seen, on_turn=False),
    }

    def _complete(self, dog: Dog, seat: int) -> Event:
        """The tail's layer puts a token on the dog; the cat decides the owner."""
        dog["complete"] = True
        dog["owner"] = seat if has_cat(dog["cards"][-1]) else dog["by"][0]
        self.state.tokens_left[seat] -= 1
        return {"type": "dog_complete", "dog": dog["id"], "owner": dog["owner"],
                "token_by": seat, "tokens_left": self.state.tokens_left[seat]}

    def _after_placement(self, seat: int) -> list[Event]:
        """Stop on the last token; otherwise end the round if nobody can ever play again."""
        if self.state.tokens_left[seat] == 0:
            return [{"type": "stop", "seat": seat}, *self._end_round(END_STOP, seat)]
        if self.state.dead_end():
            return self._end_round(END_DEAD, None)
        return []

    def round_limit(self) -> tuple[int, float] | None:
        """The current round and the table's ``round_seconds`` (None without a limit)."""
        limit = self.state.options["round_seconds"]
        return (self.state.round, float(limit)) if limit else None

    def time_up(self, round_no: int | None = None) -> list[Event]:
        """End the current round because its time limit passed (like a dead end).

        The server calls this; ``round_no`` guards against a late timer: when it
        names a round that is no longer running, nothing happens. Refused with
        NOT_ALLOWED on a table without ``round_seconds``.
        """
        s = self.state
        if s.options["round_seconds"] is None:
            raise RuleError(ErrorCode.NOT_ALLOWED, "this table has no round time limit")
        if s.over or (round_no is not None and round_no != s.round):
            return []
        return self._end_round(END_TIME, None)

    def _end_round(self, end: str, stopped_by: int | None) -> list[Event]:
        """Discard held cards, score, then deal the next round or finish the game."""
        s = self.state
        for seat, card in enumerate(s.held):
            if card is not None:
                s.discarded[seat].append(card)
        s.held = [None] * s.seats
        s.held_from = [None] * s.seats
        cards_won = [sum(len(d["cards"]) for d in s.dogs if d["owner"] == seat)
                     for seat in range(s.seats)]
        emptied = [any(not pile for pile in s.piles[seat]) for seat in range(s.seats)]
        points = scoring.round_points(cards_won, emptied)
        s.scores = [a + b for a, b in zip(s.scores, points, strict=True)]
        s.completed_rounds.append({"cards_won": cards_won, "points": points,
                                   "stopped_by": stopped_by})
        events: list[Event] = [{
            "type": "round_over", "round": s.round, "end": end, "stopped_by": stopped_by,
            "cards_won": cards_won, "points": points, "emptied_a_pile": emptied,
            "scores": list(s.scores)}]
        if s.round == ROUNDS:
            s.over = True
            s.winners = scoring.winners(s.scores)
            events.append({"type": "game_over", "winners": list(s.winners),
                           "scores": list(s.scores)})
            return events
        s.round += 1
        s.piles = deal_round(s.seed, s.round, s.seats, s.fixed_deals)
        s.dogs = []
        s.tokens_left = [TOKENS] * s.seats
        s.discarded = [[] for _ in range(s.seats)]
        events.append({"type": "round_started", "round": s.round})
        return events

    # -- what players see ---------------------------------------------------------

    def seat_view(self, seat: int | None) -> View:
        """Own held card only, the pile it came from, own legal actions."""
        s = self.state
        own = s.held[seat] if seat is not None else None
        return {
            "seat": seat,
            "hand": [own] if own is not None else [],
            "hand_pile": s.held_from[seat] if seat is not None else None,
            "legal": self.legal_actions(seat) if seat is not None else [],
        }

    def public_view(self) -> View:
        """Piles as sizes; who holds a card; the table, tokens and scores."""
        s = self.state
        return {
            "game": self.name,
            "round": s.round,
            "rounds": ROUNDS,
            "phase": s.phase,
            "round_seconds": s.options["round_seconds"],
            "holding": [card is not None for card in s.held],
            "pile_sizes": [[len(pile) for pile in seat_piles] for seat_piles in s.piles],
            "dogs": json_copy(s.dogs),
            "tokens_left": list(s.tokens_left),
            "scores": list(s.scores),
            "completed_rounds": json_copy(s.completed_rounds),
            "to_act": self.to_act(),
            "over": s.over,
            "winners": list(s.winners),
        }

    def summary(self) -> dict[str, Any]:
        """The conformance state fields (full information), ``visible`` built from views."""
        s = self.state
        views = [self.view(seat) for seat in range(s.seats)]
        public = views[0]
        return {
            "round": s.round,
            "phase": public["phase"],
            "held": list(s.held),
            "pile_sizes": public["pile_sizes"],
            "dogs": public["dogs"],
            "tokens_left": public["tokens_left"],
            "scores": public["scores"],
            "completed_rounds": public["completed_rounds"],
            "over": s.over,
            "winners": list(s.winners),
            "discarded": [list(cards) for cards in s.discarded],
            "visible": [[views[viewer]["hand"] if owner == viewer else None
                         for owner in range(s.seats)] for viewer in range(s.seats)],
        }


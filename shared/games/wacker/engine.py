"""The Willi Wacker rules engine behind the uniform :class:`~shared.games.base.Game` interface.

A turn: the seat on turn plays (``lay``, ``extend`` or one ``action`` card).
FLORA and SCHNORRER open a *duel* (phase ``respond``) in which one seat at a
time answers out of turn; a won FLORA lets the thief extend the stolen tray
(``after_flora``). Then the seat draws up to 7 and the next seat is on turn.
Once the talon is empty the round ends as soon as a hand is empty.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from shared.games.base import Action, Event, View, derived_rng
from shared.games.engine import Engine, Move
from shared.games.errors import ErrorCode, RuleError, SetupError
from shared.games.record import json_copy
from shared.games.wacker.cards import (
    ANSWERS,
    FLORA,
    HAND_SIZE,
    SCHNORRER,
    TRAY_ACTIONS,
    TRINK,
    ZAPFENSTREICH,
    holds,
    is_beer,
    is_card,
    sorted_beers,
    without,
)
from shared.games.wacker.deal import deal_round, parse_setup
from shared.games.wacker.legal import legal_actions, targets
from shared.games.wacker.state import Duel, Phase, Tray, WackerState
from shared.games.wacker.strategy import choose
from shared.games.wacker.trays import extends, forms_group


def _card(value: object) -> str:
    """A card in notation, else INVALID_ACTION."""
    if not is_card(value):
        raise RuleError(ErrorCode.INVALID_ACTION, f"not a card: {value!r}")
    assert isinstance(value, str)
    return value


def _cards(value: list[Any]) -> list[str]:
    """A non-empty list of cards in notation, else INVALID_ACTION."""
    if not value:
        raise RuleError(ErrorCode.INVALID_ACTION, "'cards' must name at least one card")
    return [_card(item) for item in value]


class WilliWacker(Engine[WackerState], game="willi-wacker"):
    """A game of Willi Wacker for 3 to 6 seats."""

    @classmethod
    def initial_state(cls, seats: int, options: dict[str, Any], seed: int,
                      setup: Mapping[str, Any] | None) -> WackerState:
        """Check the option values; the setup may fix the deals of some rounds."""
        _check_option_values(options, seats)
        return WackerState(
            seats=seats, seed=seed, options=options, setup_rounds=parse_setup(setup, seats),
            round=1, dealer=options["first_dealer"], turn=0, phase=Phase.TURN, hands=[],
            talon=[], trays=[], discard=[], scores=[0] * seats)

    def start(self) -> None:
        """Deal round 1."""
        self._deal([])

    # -- who acts, what is legal ----------------------------------------------

    def to_act(self) -> list[int]:
        """The one seat that owes a decision: on turn, asked in a duel, or the thief."""
        state = self.state
        if state.phase == Phase.OVER:
            return []
        if state.phase == Phase.RESPOND:
            assert state.duel is not None
            return [state.duel.asked]
        return [state.turn]

    def legal_actions(self, seat: int) -> list[Action]:
        """Every distinct action ``seat`` may take now (``picks`` omitted)."""
        return legal_actions(self.state, seat, self.to_act())

    def default_action(self, seat: int) -> Action | None:
        """On turn a sensible play (the heuristic's choice); in a duel or after FLORA: pass."""
        if self.state.phase == Phase.TURN and seat in self.to_act():
            return choose(self.view(seat))
        return super().default_action(seat)

    # -- applying actions -----------------------------------------------------

    def _lay_cards(self, seat: int, action: Mapping[str, Any]) -> list[str]:
        return _cards(action["cards"])

    def _extension(self, seat: int, action: Mapping[str, Any]) -> tuple[str, list[str]]:
        return action["tray"], _cards(action["cards"])

    def _answer(self, seat: int, action: Mapping[str, Any]) -> str:
        return _card(action["card"])

    def _action_card(self, seat: int,
                     action: Mapping[str, Any]) -> tuple[str, str | None, dict[str, int]]:
        """(card, tray id or None, SCHNORRER picks), refusing what is malformed."""
        card = _card(action["card"])
        tray_id: str | None = action.get("tray")
        if tray_id is not None and card not in TRAY_ACTIONS:
            raise RuleError(ErrorCode.INVALID_ACTION, f"{card} names no tray")
        if "picks" in action and card != SCHNORRER:
            raise RuleError(ErrorCode.INVALID_ACTION, "only SCHNORRER takes 'picks'")
        return card, tray_id, self._parse_picks(seat, action.get("picks", {}))

    def _lay(self, seat: int, cards: list[str]) -> list[Event]:
        state = self.state
        if not holds(state.hands[seat], cards):
            raise RuleError(ErrorCode.CARD_NOT_IN_HAND, f"seat {seat} does not hold {cards}")
        if not forms_group(cards):
            raise RuleError(ErrorCode.NO_MATCH, f"{cards} is neither a set nor a run of beers")
        state.hands[seat] = without(state.hands[seat], cards)
        state.trays_laid += 1
        tray = Tray(f"t{state.trays_laid}", seat, sorted_beers(cards))
        state.trays.append(tray)
        events: list[Event] = [{"type": "lay", "seat": seat, "tray": tray.id,
                                "cards": list(tray.cards)}]
        self._end_turn(events)
        return events

    def _extend(self, seat: int, extension: tuple[str, list[str]]) -> list[Event]:
        tray_id, cards = extension
        state = self.state
        tray = state.tray(tray_id)
        if not holds(state.hands[seat], cards):
            raise RuleError(ErrorCode.CARD_NOT_IN_HAND, f"seat {seat} does not hold {cards}")
        if tray is None or tray.drunk:
            raise RuleError(ErrorCode.CARD_NOT_IN_HAND, f"no face-up tray {tray_id!r}")
        if not extends(tray.cards, cards):
            raise RuleError(ErrorCode.NO_MATCH, f"{cards} do not extend {tray.id} {tray.cards}")
        if tray.owner != seat:
            raise RuleError(ErrorCode.NOT_ALLOWED, f"{tray.id} belongs to seat {tray.owner}")
        if state.phase == Phase.AFTER_FLORA and tray.id != state.stolen_tray:
            raise RuleError(ErrorCode.NOT_ALLOWED, f"after FLORA only {state.stolen_tray} "
                                                 "may be extended")
        state.hands[seat] = without(state.hands[seat], cards)
        tray.cards = sorted_beers([*tray.cards, *cards])
        events: list[Event] = [{"type": "extend", "seat": seat, "tray": tray.id,
                                "cards": sorted_beers(cards)}]
        self._end_turn(events)
        return events

    def _action(self, seat: int, played: tuple[str, str | None, dict[str, int]]) -> list[Event]:
        card, tray_id, picks = played
        state = self.state
        if card not in state.hands[seat]:
            raise RuleError(ErrorCode.CARD_NOT_IN_HAND, f"seat {seat} does not hold {card}")
        tray = state.tray(tray_id) if tray_id is not None else None
        if tray_id is not None and (tray is None or tray.drunk):
            raise RuleError(ErrorCode.CARD_NOT_IN_HAND, f"no face-up tray {tray_id!r}")
        if is_beer(card):
            raise RuleError(ErrorCode.NOT_ALLOWED, "beer cards are laid or extended, not played "
                                                 "as an action")
        valid = targets(state, seat, card)
        if tray_id is None and valid:
            raise RuleError(ErrorCode.NOT_ALLOWED, f"{card} has a target, name one of {valid}")
        if tray is not None and tray.id not in valid:
            whose = "your own" if card == TRINK else "another seat's"
            raise RuleError(ErrorCode.NOT_ALLOWED, f"{card} needs {whose} tray, "
                                                 f"{tray.id} is seat {tray.owner}'s")
        state.hands[seat] = without(state.hands[seat], [card])
        state.discard.append(card)
        events: list[Event] = [{"type": "action", "seat": seat, "card": card, "tray": tray_id}]
        if card == SCHNORRER:
            self._start_schnorrer(seat, picks, events)
        elif tray is None:
            events.append({"type": "no_effect", "seat": seat, "card": card})
            self._end_turn(events)
        elif card == TRINK:
            tray.drunk = True
            events.append({"type": "drunk", "seat": seat, "tray": tray.id, "beers": tray.beers})
            self._end_turn(events)
        elif card == ZAPFENSTREICH:
            self._discard_tray(tray, events)
            self._end_turn(events)
        else:
            assert card == FLORA
            state.duel = Duel("flora", thief=seat, victim=tray.owner, asked=tray.owner,
                              tray=tray.id)
            self._await_answer(events)
        return events

    def _parse_picks(self, seat: int, picks: Mapping[Any, Any]) -> dict[str, int]:
        """Normalise ``{"seat": index}``; INVALID_ACTION for seats or indexes out of range."""
        parsed: dict[str, int] = {}
        for key, index in picks.items():
            text = str(key) if isinstance(key, int) and not isinstance(key, bool) else key
            if not (isinstance(text, str) and text.isascii() and text.isdigit()):
                raise RuleError(ErrorCode.INVALID_ACTION, f"picks: {key!r} is not a seat")
            victim = int(text)
            if victim == seat or victim >= self.state.seats or str(victim) in parsed:
                raise RuleError(ErrorCode.INVALID_ACTION, f"picks: no victim seat {key!r}")
            if not isinstance(index, int) or isinstance(index, bool) \
                    or not 0 <= index < len(self.state.hands[victim]):
                raise RuleError(ErrorCode.INVALID_ACTION,
                              f"picks: {index!r} is no index into seat {victim}'s hand")
            parsed[str(victim)] = index
        return parsed

    def _respond(self, seat: int, card: str) -> list[Event]:
        state = self.state
        duel = state.duel
        assert duel is not None
        if card not in state.hands[seat]:
            raise RuleError(ErrorCode.CARD_NOT_IN_HAND, f"seat {seat} does not hold {card}")
        if card not in ANSWERS:
            raise RuleError(ErrorCode.NOT_ALLOWED, "only PRUEGEL or ZAPFENSTREICH answer a duel")
        if card == ZAPFENSTREICH and duel.kind == "schnorrer":
            raise RuleError(ErrorCode.NOT_ALLOWED, "ZAPFENSTREICH does not answer a SCHNORRER")
        state.hands[seat] = without(state.hands[seat], [card])
        state.discard.append(card)
        events: list[Event] = [{"type": "respond", "seat": seat, "card": card}]
        if card == ZAPFENSTREICH:
            tray = state.tray(str(duel.tray))
            assert tray is not None
            self._discard_tray(tray, events)
            self._end_turn(events)
        else:
            duel.last_pruegel = seat
            duel.asked = duel.thief if seat == duel.victim else duel.victim
            self._await_answer(events)
        return events

    def _pass(self, seat: int, action: Mapping[str, Any]) -> list[Event]:
        events: list[Event] = [{"type": "pass", "seat": seat}]
        if self.state.phase == Phase.AFTER_FLORA:
            self._end_turn(events)
        else:
            self._settle(events)
        return events

    moves = {
        "lay": Move(_lay, {"cards": list}, parse=_lay_cards, phases=frozenset({Phase.TURN})),
        "extend": Move(_extend, {"tray": str, "cards": list}, parse=_extension,
                       phases=frozenset({Phase.TURN, Phase.AFTER_FLORA})),
        "action": Move(_action, {"card": str}, {"tray": str, "picks": dict}, parse=_action_card,
                       phases=frozenset({Phase.TURN})),
        "respond": Move(_respond, {"card": str}, parse=_answer, phases=frozenset({Phase.RESPOND})),
        "pass": Move(_pass, phases=frozenset({Phase.RESPOND, Phase.AFTER_FLORA})),
    }

    # -- duels ----------------------------------------------------------------

    def _start_schnorrer(self, thief: int, picks: dict[str, int], events: list[Event]) -> None:
        """Rob every other seat holding cards, clockwise from the thief, one duel each."""
        state = self.state
        clockwise = [(thief + step) % state.seats for step in range(1, state.seats)]
        victims = [seat for seat in clockwise if state.hands[seat]]
        events.append({"type": "schnorrer", "seat": thief, "victims": victims})
        if not victims:
            events.append({"type": "no_effect", "seat": thief, "card": SCHNORRER})
            self._end_turn(events)
            return
        state.duel = Duel("schnorrer", thief=thief, victim=victims[0], asked=victims[0],
                          victims=victims[1:], picks=picks)
        self._await_answer(events)

    def _await_answer(self, events: list[Event]) -> None:
        """Ask ``duel.asked``; a seat with an empty hand cannot answer and so declines."""
        state = self.state
        assert state.duel is not None
        if state.hands[state.duel.asked]:
            state.phase = Phase.RESPOND
        else:
            self._settle(events)

    def _settle(self, events: list[Event]) -> None:
        """The asked seat declined: the last PRUEGEL (or the thief) wins."""
        duel = self.state.duel
        assert duel is not None
        if duel.kind == "flora":
            self._settle_flora(duel, events)
        else:
            self._settle_schnorrer(duel, events)

    def _settle_flora(self, duel: Duel, events: list[Event]) -> None:
        state = self.state
        tray = state.tray(str(duel.tray))
        assert tray is not None
        state.duel = None
        if duel.winner() != duel.thief:
            events.append({"type": "tray_kept", "seat": duel.victim, "tray": tray.id})
            self._end_turn(events)
            return
        tray.owner = duel.thief
        events.append({"type": "tray_stolen", "seat": duel.thief, "victim": duel.victim,
                       "tray": tray.id})
        if state.hands[duel.thief]:
            state.phase = Phase.AFTER_FLORA
            state.stolen_tray = tray.id
        else:
            self._end_turn(events)

    def _settle_schnorrer(self, duel: Duel, events: list[Event]) -> None:
        state = self.state
        hand = state.hands[duel.victim]
        if duel.winner() == duel.thief and hand:
            index = duel.picks.get(str(duel.victim), len(hand))
            if index >= len(hand):
                rng = derived_rng(state.seed, "schnorrer", state.round, state.turns, duel.victim)
                index = rng.randrange(len(hand))
            state.hands[duel.thief].append(hand.pop(index))
            events.append({"type": "card_taken", "seat": duel.thief, "victim": duel.victim})
        else:
            events.append({"type": "card_kept", "seat": duel.victim})
        while duel.victims:
            victim = duel.victims.pop(0)
            if state.hands[victim]:
                duel.victim, duel.asked, duel.last_pruegel = victim, victim, None
                self._await_answer(events)
                return
        state.duel = None
        self._end_turn(events)

    def _discard_tray(self, tray: Tray, events: list[Event]) -> None:
        self.state.trays.remove(tray)
        self.state.discard.extend(tray.cards)
        events.append({"type": "tray_discarded", "tray": tray.id, "owner": tray.owner})

    # -- turns and rounds -----------------------------------------------------

    def _draw_up(self, seat: int, events: list[Event]) -> None:
        state = self.state
        count = min(max(0, HAND_SIZE - len(state.hands[seat])), len(state.talon))
        if count:
            state.hands[seat].extend(state.talon[:count])
            del state.talon[:count]
            events.append({"type": "draw", "seat": seat, "count": count})

    def _end_turn(self, events: list[Event]) -> None:
        """Draw up to 7, end the round if due, else pass the turn clockwise."""
        state = self.state
        state.duel, state.stolen_tray, state.phase = None, None, Phase.TURN
        self._draw_up(state.turn, events)
        if self._round_done():
            self._end_round(events)
            return
        state.turn = (state.turn + 1) % state.seats
        self._begin_turn(events)

    def _begin_turn(self, events: list[Event]) -> None:
        """Ruling: a seat starting its turn with no cards draws first."""
        state = self.state
        state.turns += 1
        events.append({"type": "turn", "seat": state.turn})
        if not state.hands[state.turn]:
            self._draw_up(state.turn, events)
            if self._round_done():
                self._end_round(events)

    def _round_done(self) -> bool:
        """Once the talon is empty, any empty hand ends the round."""
        return not self.state.talon and not all(self.state.hands)

    def _deal(self, events: list[Event]) -> None:
        state = self.state
        state.hands, state.talon = deal_round(state.seed, state.round, state.seats,
                                              state.setup_rounds)
        state.trays, state.discard, state.trays_laid = [], [], 0
        state.phase, state.turn = Phase.TURN, (state.dealer + 1) % state.seats
        events.append({"type": "deal", "round": state.round, "dealer": state.dealer,
                       "talon_size": len(state.talon)})
        self._begin_turn(events)

    def _end_round(self, events: list[Event]) -> None:
        """Score drunk beers; end the game at the target (or the round cap), else deal."""
        state = self.state
        drunk = state.drunk()
        state.scores = [total + beers for total, beers in zip(state.scores, drunk, strict=True)]
        state.completed_rounds.append({"drunk": drunk})
        events.append({"type": "round_over", "round": state.round, "drunk": drunk,
                       "scores": list(state.scores)})
        best = max(state.scores)
        if best >= state.options["target"] or state.round >= state.options["max_rounds"]:
            state.phase = Phase.OVER
            state.winners = [seat for seat, total in enumerate(state.scores) if total == best]
            events.append({"type": "game_over", "winners": list(state.winners),
                           "scores": list(state.scores)})
            return
        state.round += 1
        state.dealer = (state.dealer + 1) % state.seats
        self._deal(events)

    # -- what people see ------------------------------------------------------

    def seat_view(self, seat: int | None) -> View:
        """Own hand only (a spectator's view has no ``hand``) and own legal actions."""
        own: View = {"seat": seat, "legal": [] if seat is None else self.legal_actions(seat)}
        if seat is not None:
            own["hand"] = list(self.state.hands[seat])
        return own

    def public_view(self) -> View:
        """Other hands and the talon as counts; duels and trays."""
        state = self.state
        return {
            "game": self.name,
            "round": state.round,
            "dealer": state.dealer,
            "target": state.options["target"],
            "phase": state.phase,
            "turn": state.turn,
            "to_act": self.to_act(),
            "hand_sizes": [len(hand) for hand in state.hands],
            "talon_size": len(state.talon),
            "discard_size": len(state.discard),
            "trays": [tray.public() for tray in state.face_up()],
            "drunk": state.drunk(),
            "duel": state.duel.public() if state.duel else None,
            "stolen_tray": state.stolen_tray,
            "scores": list(state.scores),
            "completed_rounds": json_copy(state.completed_rounds),
            "over": self.over,
            "winners": list(state.winners),
        }

    def summary(self) -> dict[str, Any]:
        """The conformance state fields of the rules doc (plus turn and duel)."""
        state = self.state
        hands = [self.view(seat)["hand"] for seat in range(state.seats)]
        return {
            "round": state.round,
            "dealer": state.dealer,
            "phase": state.phase,
            "turn": state.turn,
            "to_act": self.to_act(),
            "hands": [list(hand) for hand in state.hands],
            "talon_size": len(state.talon),
            "trays": [tray.public() for tray in state.face_up()],
            "drunk": state.drunk(),
            "scores": list(state.scores),
            "completed_rounds": json_copy(state.completed_rounds),
            "duel": state.duel.public() if state.duel else None,
            "over": self.over,
            "winners": list(state.winners),
            "visible": [[hands[viewer] if owner == viewer else None
                         for owner in range(state.seats)] for viewer in range(state.seats)],
        }


def _check_option_values(options: Mapping[str, Any], seats: int) -> None:
    """Option ranges: a dealer seat, and positive target and round cap."""
    def whole(name: str) -> int:
        value = options[name]
        if not isinstance(value, int) or isinstance(value, bool):
            raise SetupError(f"option '{name}' must be an integer")
        return value

    if not 0 <= whole("first_dealer") < seats:
        raise SetupError(f"option 'first_dealer' must be a seat 0..{seats - 1}")
    for name in ("target", "max_rounds"):
        if whole(name) < 1:
            raise SetupError(f"option '{name}' must be at least 1")

"""Willi Stich property tests over thousands of seeded random games with 3 to 6 seats.

Checked against an oracle written here from the rules (not from the engine):
at every step, the dealer rule holds, cards are conserved within a deal and
events carry only public fields; at a random share of the steps, the listed
legal actions are exactly the accepted ones, other actions are refused with the
right code and change nothing, no view shows a card its reader may not see
(blind and forehead rounds included), and the state survives a JSON round
trip. A game replayed from a mid-game snapshot ends in the same state. Seats
leave and chat now and then.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from typing import Any

import pytest

from shared.games.errors import ErrorCode, RuleError
from shared.games.stich.engine import WilliStich

SUITS = "CSHD"
RANKS = ("7", "8", "9", "10", "J", "Q", "K", "A")
ALL_CARDS = [suit + rank for suit in SUITS for rank in RANKS]
BLIND, FOREHEAD, LAST = 10, 19, 19
NEEDED_PHASE = {"trump": "choose_trump", "call": "call", "play": "play"}
#: Keys each public event may carry: nothing else, so no hidden card can slip out.
EVENT_KEYS = {
    "deal": {"round", "kind", "hand_size", "dealer", "turned"},
    "trump": {"seat", "suit"},
    "call": {"seat", "tricks"},
    "play": {"seat", "card"},
    "trick": {"winner", "cards"},
    "round_over": {"round", "calls", "tricks", "points", "scores"},
    "leave": {"seat", "score"},
    "round_cancelled": {"round"},
    "chat": {"seat", "text"},
    "game_over": {"winners", "scores"},
}


def hand_size(round_no: int) -> int:
    return min(round_no, 20 - round_no)


def expected_code(summary: dict[str, Any], seat: int, action: dict[str, Any]) -> ErrorCode | None:
    """The refusal the rules demand for a trump, call or play (None: accept)."""
    if summary["over"]:
        return ErrorCode.GAME_OVER
    if summary["phase"] != NEEDED_PHASE[action["type"]]:
        return ErrorCode.WRONG_PHASE
    if summary["to_act"] != [seat]:
        return ErrorCode.NOT_YOUR_TURN
    size = hand_size(summary["round"])
    if action["type"] == "call":
        others = sum(c for s, c in enumerate(summary["calls"]) if c is not None and s != seat)
        too_many = action["tricks"] > size
        dealer_rule = seat == summary["dealer"] and others + action["tricks"] == size
        return ErrorCode.NOT_ALLOWED if too_many or dealer_rule else None
    if action["type"] == "play" and summary["round"] != FOREHEAD:
        hand = summary["hands"][seat]
        if action["card"] not in hand:
            return ErrorCode.CARD_NOT_IN_HAND
        led = summary["trick"][0][1][0] if summary["trick"] else None
        if led and action["card"][0] != led and any(card[0] == led for card in hand):
            return ErrorCode.MUST_FOLLOW
    return None


def candidates(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """Every trump, call and play worth trying in this state (legal or not)."""
    plays: list[dict[str, Any]] = [{"type": "play", "card": card} for card in ALL_CARDS]
    if summary["round"] == FOREHEAD:
        plays.append({"type": "play"})
    return ([{"type": "trump", "suit": suit} for suit in SUITS]
            + [{"type": "call", "tricks": n} for n in range(hand_size(summary["round"]) + 2)]
            + plays)


def expected_hands(summary: dict[str, Any], viewer: int | None) -> list[list[str] | None]:
    """What the rules let ``viewer`` see of every hand."""
    def sees(owner: int) -> bool:
        if viewer is None or not summary["active"][viewer]:
            return False
        if summary["round"] == FOREHEAD:
            return owner != viewer
        if summary["round"] == BLIND and summary["phase"] == "call":
            return False
        return owner == viewer
    return [sorted(hand) if sees(owner) else None for owner, hand in enumerate(summary["hands"])]


def cards_of_deal(summary: dict[str, Any]) -> Counter[str]:
    """Every card of the current deal: hands, the trick, collected tricks, the turned card."""
    cards = Counter(card for hand in summary["hands"] for card in hand)
    cards.update(card for _, card in summary["trick"])
    cards.update(card for done in summary["played_tricks"] for _, card in done["cards"])
    if summary["turned"]:
        cards[summary["turned"]] += 1
    return cards


def check_state(state: dict[str, Any]) -> None:
    """Invariants of the stored state (``to_dict``): cheap enough for every step."""
    active = state["active"]
    size = hand_size(state["round"])
    cards = cards_of_deal(state)
    assert all(count <= 2 and card in ALL_CARDS for card, count in cards.items())
    if state["phase"] != "over":
        turned = 0 if state["round"] in (5, 15, 7, 13) else 1
        assert sum(cards.values()) == sum(active) * size + turned
        assert all(not hand for seat, hand in enumerate(state["hands"]) if not active[seat])
        assert active[state["turn"]] and active[state["dealer"]]
    if state["phase"] == "play":
        assert sum(c for c in state["calls"] if c is not None) != size  # dealer rule
        assert all((c is None) != active[s] for s, c in enumerate(state["calls"]))
    for record in state["completed_rounds"][-1:]:
        assert sum(c for c in record["calls"] if c is not None) != hand_size(record["round"])
        assert sum(record["tricks"]) == hand_size(record["round"])


def check_views(game: WilliStich, summary: dict[str, Any]) -> None:
    public = {summary["turned"], *(card for _, card in summary["trick"]),
              *(card for done in summary["played_tricks"] for _, card in done["cards"])}
    for viewer in [None, *range(game.seat_count)]:
        view = game.view(viewer)
        shown = expected_hands(summary, viewer)
        assert [None if hand is None else sorted(hand) for hand in view["hands"]] == shown
        seen = public | {card for hand in shown if hand for card in hand}
        hidden = {card for hand in summary["hands"] for card in hand} - seen
        text = json.dumps(view)
        assert not [card for card in hidden if f'"{card}"' in text], (viewer, hidden)
        if viewer is not None:
            assert view["legal"] == game.legal_actions(viewer)
            assert summary["visible"][viewer] == view["hands"]


def check_actions(game: WilliStich, summary: dict[str, Any], rng: random.Random) -> None:
    """Legal list == accepted candidates; a sample of the rest is refused, state untouched."""
    before = json.dumps(game.to_dict(), sort_keys=True)
    refused: list[tuple[int, dict[str, Any], ErrorCode]] = []
    for seat in range(game.seat_count):
        accepted = []
        for action in candidates(summary):
            code = expected_code(summary, seat, action)
            if code is None:
                accepted.append(action)
            else:
                refused.append((seat, action, code))
        legal = game.legal_actions(seat)
        if summary["round"] == FOREHEAD and summary["phase"] == "play" and legal:
            assert legal == [{"type": "play"}] and {"type": "play"} in accepted
        else:
            assert sorted(map(json.dumps, legal)) == sorted(map(json.dumps, accepted))
    for seat, action, code in rng.sample(refused, min(8, len(refused))):
        with pytest.raises(RuleError) as caught:
            game.apply(seat, action)
        assert caught.value.code == code, (seat, action, caught.value.message)
    assert json.dumps(game.to_dict(), sort_keys=True) == before
    for seat in game.to_act():
        probe = WilliStich.from_dict(json.loads(before))
        probe.apply(seat, rng.choice(game.legal_actions(seat)))


def check_events(events: list[dict[str, Any]], before: dict[str, Any], seat: int) -> None:
    for event in events:
        assert set(event) - {"type"} == EVENT_KEYS[event["type"]], event
        if event["type"] == "play":
            assert event["card"] in before["hands"][seat]


def next_move(game: WilliStich, state: dict[str, Any], rng: random.Random,
              leave_rate: float) -> tuple[int, dict]:
    """Mostly a random legal move; now and then a chat or a seat leaving."""
    roll = rng.random()
    still_in = [seat for seat, active in enumerate(state["active"]) if active]
    if roll < leave_rate:
        return rng.choice(still_in), {"type": "leave"}
    if roll < 2 * leave_rate and state["round"] != FOREHEAD:
        return rng.choice(still_in), {"type": "chat", "text": "gut Blatt"}
    seat = game.to_act()[0]
    return seat, rng.choice(game.legal_actions(seat))


def play_checked(seed: int, seats: int, start: int, max_rounds: int,
                 leave_rate: float = 0.004, check_rate: float = 0.3) -> WilliStich:
    """Play one random game; stop after ``max_rounds`` rounds.

    State, events and conservation are checked at every step; views, the action
    oracle and the JSON round trip at a random ``check_rate`` share of the steps.
    """
    rng = random.Random(seed)
    game = WilliStich.new(seats, {"start_round": start, "first_dealer": rng.randrange(seats)},
                          seed)
    log: list[tuple[int, dict]] = []
    snapshot_at = rng.randrange(40)
    snapshot: dict[str, Any] | None = None
    state = game.to_dict()
    deal_cards = cards_of_deal(state)
    rounds = 0
    while not game.over and rounds < max_rounds:
        check_state(state)
        if rng.random() < check_rate:
            summary = game.summary()
            check_views(game, summary)
            check_actions(game, summary, rng)
            assert WilliStich.from_dict(json.loads(json.dumps(state))).to_dict() == state
        if len(log) == snapshot_at:
            snapshot = state
        seat, action = next_move(game, state, rng, leave_rate)
        log.append((seat, action))
        events = game.apply(seat, action)
        check_events(events, state, seat)
        state = game.to_dict()
        if any(event["type"] in ("deal", "game_over") for event in events):
            deal_cards = cards_of_deal(state)
        else:
            assert cards_of_deal(state) == deal_cards
        rounds += sum(event["type"] in ("round_over", "round_cancelled") for event in events)
    check_state(state)
    if snapshot is not None:
        replayed = WilliStich.from_dict(snapshot)
        for seat, action in log[snapshot_at:]:
            replayed.apply(seat, action)
        assert replayed.to_dict() == game.to_dict()
    return game


@pytest.mark.slow
@pytest.mark.parametrize("block", range(4))
def test_random_rounds_from_every_start(block: int) -> None:
    """900 games of one round each, starting at every round 1..19, 3 to 6 seats."""
    for index in range(225):
        seed = block * 225 + index
        play_checked(seed, seats=3 + seed % 4, start=1 + seed % 19, max_rounds=1,
                     check_rate=0.12)


@pytest.mark.slow
@pytest.mark.parametrize("block", range(4))
def test_random_games_to_the_end(block: int) -> None:
    """1,000 games played from round 16, 17, 18 or 19 to the end, seats leaving more often."""
    for index in range(250):
        seed = 10_000 + block * 250 + index
        game = play_checked(seed, seats=3 + seed % 4, start=16 + seed % 4, max_rounds=99,
                            leave_rate=0.01, check_rate=0.08)
        scores = game.summary()["scores"]
        assert game.over and game.winners() == [s for s, x in enumerate(scores)
                                                if x == max(scores)]


@pytest.mark.parametrize("seats", [3, 4, 5, 6])
def test_full_19_round_games(seats: int) -> None:
    """Whole games from round 1: every special round, scoring to the end."""
    for seed in range(3):
        game = play_checked(20_000 + seats * 10 + seed, seats, start=1, max_rounds=99,
                            leave_rate=0.0, check_rate=0.03)
        summary = game.summary()
        assert summary["over"] and [r["round"] for r in summary["completed_rounds"]] == list(
            range(1, 20))
        assert summary["scores"] == [sum(r["points"][s] for r in summary["completed_rounds"])
                                     for s in range(seats)]

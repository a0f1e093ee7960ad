"""Willi Wacker duels: FLORA and SCHNORRER, answered out of turn one seat at a time."""

from __future__ import annotations

import json

import pytest

from shared.games.errors import ErrorCode
from shared.games.wacker.engine import WilliWacker
from tests.support.engines import act, refused
from tests.support.wacker import conserved, dealt, empty_hand, kinds

#: Seat 0 lays t1 = B5 B5, seat 1 t2 = B6, seat 2 t3 = B8; the draws are B1 B1 B2 | B2 B3 | ...
VICTIM = ["B5", "B5", "PRUEGEL", "PRUEGEL", "ZAPFENSTREICH", "B4"]
THIEF = ["B6", "FLORA", "PRUEGEL", "ZAPFENSTREICH", "B5", "B7"]
TALON = ["B1", "B1", "B2", "B2", "B3"] + ["B3"] * 7 + ["B4"] * 6


def flora_game() -> WilliWacker:
    """Seat 1 has just played FLORA on seat 0's tray t1; seat 0 is asked."""
    game = dealt([list(VICTIM), list(THIEF), ["B8"]], talon=list(TALON))
    act(game, 0, "lay", cards=["B5", "B5"])
    act(game, 1, "lay", cards=["B6"])
    act(game, 2, "lay", cards=["B8"])
    act(game, 0, "lay", cards=["B1"])
    events = act(game, 1, "action", card="FLORA", tray="t1")
    assert kinds(events) == ["action"]
    return game


def owner(game: WilliWacker, tray_id: str) -> int | None:
    return next((tray["owner"] for tray in game.summary()["trays"] if tray["id"] == tray_id),
                None)


def test_flora_asks_the_victim_and_shows_the_duel() -> None:
    game = flora_game()
    summary = game.summary()
    assert (summary["phase"], summary["to_act"]) == ("respond", [0])
    assert game.view(2)["duel"] == {"kind": "flora", "thief": 1, "victim": 0, "asked": 0,
                                    "last_pruegel": None, "tray": "t1", "victims_left": []}
    assert game.legal_actions(0) == [{"type": "pass"}, {"type": "respond", "card": "PRUEGEL"},
                                     {"type": "respond", "card": "ZAPFENSTREICH"}]
    assert game.legal_actions(1) == [] and game.legal_actions(2) == []


def test_flora_duel_refusals() -> None:
    game = flora_game()
    refused(game, 1, {"type": "pass"}, ErrorCode.NOT_YOUR_TURN)
    refused(game, 2, {"type": "respond", "card": "PRUEGEL"}, ErrorCode.NOT_YOUR_TURN)
    refused(game, 1, {"type": "lay", "cards": ["B7"]}, ErrorCode.WRONG_PHASE)
    refused(game, 0, {"type": "action", "card": "PRUEGEL"}, ErrorCode.WRONG_PHASE)
    refused(game, 0, {"type": "respond", "card": "FLORA"}, ErrorCode.CARD_NOT_IN_HAND)
    refused(game, 0, {"type": "respond", "card": "B4"}, ErrorCode.NOT_ALLOWED)


def test_an_unanswered_flora_gives_the_thief_the_tray_to_extend_at_once() -> None:
    game = flora_game()
    events = act(game, 0, "pass")
    assert events == [{"type": "pass", "seat": 0},
                      {"type": "tray_stolen", "seat": 1, "victim": 0, "tray": "t1"}]
    assert (game.summary()["phase"], game.to_act(), owner(game, "t1")) == ("after_flora", [1], 1)
    assert game.legal_actions(1) == [{"type": "pass"},
                                     {"type": "extend", "tray": "t1", "cards": ["B5"]}]
    act(game, 1, "extend", tray="t1", cards=["B5"])
    assert game.summary()["trays"][0] == {"id": "t1", "owner": 1, "cards": ["B5"] * 3}
    assert game.to_act() == [2] and game.view(None)["hand_sizes"][1] == 7


def test_after_flora_only_the_stolen_tray_may_be_extended_and_it_is_not_merged() -> None:
    game = flora_game()
    act(game, 0, "pass")
    refused(game, 1, {"type": "extend", "tray": "t2", "cards": ["B7"]}, ErrorCode.NOT_ALLOWED)
    refused(game, 1, {"type": "lay", "cards": ["B7"]}, ErrorCode.WRONG_PHASE)
    refused(game, 1, {"type": "action", "card": "PRUEGEL"}, ErrorCode.WRONG_PHASE)
    refused(game, 0, {"type": "pass"}, ErrorCode.NOT_YOUR_TURN)
    act(game, 1, "pass")
    assert [(tray["id"], tray["owner"]) for tray in game.summary()["trays"]] == [
        ("t1", 1), ("t2", 1), ("t3", 2), ("t4", 0)]
    assert game.to_act() == [2]


def test_a_pruegel_answer_keeps_the_tray_when_the_thief_gives_up() -> None:
    game = flora_game()
    act(game, 0, "respond", card="PRUEGEL")
    assert game.to_act() == [1] and game.view(None)["duel"]["last_pruegel"] == 0
    events = act(game, 1, "pass")
    assert {"type": "tray_kept", "seat": 0, "tray": "t1"} in events
    assert owner(game, "t1") == 0 and game.to_act() == [2]


def test_the_last_pruegel_decides_the_tray() -> None:
    game = flora_game()
    act(game, 0, "respond", card="PRUEGEL")
    act(game, 1, "respond", card="PRUEGEL")
    assert game.to_act() == [0]
    act(game, 0, "pass")
    assert owner(game, "t1") == 1 and game.summary()["phase"] == "after_flora"

    game = flora_game()
    act(game, 0, "respond", card="PRUEGEL")
    act(game, 1, "respond", card="PRUEGEL")
    act(game, 0, "respond", card="PRUEGEL")
    act(game, 1, "pass")  # seat 1 holds no more PRUEGEL but is still asked
    assert owner(game, "t1") == 0 and game.to_act() == [2]


@pytest.mark.parametrize("pruegels", [0, 1])
def test_zapfenstreich_from_either_side_discards_the_tray(pruegels: int) -> None:
    game = flora_game()
    answering = 0
    for _ in range(pruegels):
        act(game, answering, "respond", card="PRUEGEL")
        answering = 1 - answering
    events = act(game, answering, "respond", card="ZAPFENSTREICH")
    assert {"type": "tray_discarded", "tray": "t1", "owner": 0} in events
    assert owner(game, "t1") is None and game.to_act() == [2] and conserved(game)


def test_a_seat_without_answer_cards_is_still_asked() -> None:
    game = dealt([["B5", "B5"], ["FLORA", "B6"], ["B8"]], talon=["B1"] * 5 + ["B2"] * 9)
    act(game, 0, "lay", cards=["B5", "B5"])
    act(game, 1, "action", card="FLORA", tray="t1")
    assert game.to_act() == [0] and game.legal_actions(0) == [{"type": "pass"}]


def test_a_seat_with_an_empty_hand_cannot_answer_and_declines() -> None:
    game = dealt([["B5", "B5"], ["FLORA", "B6"], ["B8"]])
    act(game, 0, "lay", cards=["B5", "B5"])
    empty_hand(game, 0)
    events = act(game, 1, "action", card="FLORA", tray="t1")
    assert kinds(events) == ["action", "tray_stolen"]
    assert game.summary()["phase"] == "after_flora" and owner(game, "t1") == 1


# -- SCHNORRER ------------------------------------------------------------------------

#: Four seats, seat 1 deals, so seat 2 (the thief) starts.
HANDS = [["B1", "B2", "B3"], ["B4", "PRUEGEL", "B5"], ["SCHNORRER", "PRUEGEL", "B8"],
         ["B6", "B7", "ZAPFENSTREICH"]]


def schnorrer_game(**picks: int) -> WilliWacker:
    game = dealt([list(hand) for hand in HANDS], dealer=1)
    fields = {"picks": {key.lstrip("s"): index for key, index in picks.items()}} if picks else {}
    events = act(game, 2, "action", card="SCHNORRER", **fields)
    assert events[1] == {"type": "schnorrer", "seat": 2, "victims": [3, 0, 1]}
    return game


def test_schnorrer_robs_each_other_seat_clockwise_from_the_thief() -> None:
    game = schnorrer_game(s3=1, s0=2)
    assert game.to_act() == [3]
    refused(game, 3, {"type": "respond", "card": "ZAPFENSTREICH"}, ErrorCode.NOT_ALLOWED)
    assert act(game, 3, "pass")[1] == {"type": "card_taken", "seat": 2, "victim": 3}
    assert game.to_act() == [0]
    act(game, 0, "pass")
    assert game.summary()["hands"][2] == ["PRUEGEL", "B8", "B7", "B3"]
    assert game.view(None)["duel"]["victims_left"] == [] and game.to_act() == [1]
    act(game, 1, "respond", card="PRUEGEL")
    act(game, 2, "respond", card="PRUEGEL")
    assert game.legal_actions(1) == [{"type": "pass"}]
    act(game, 1, "pass")
    hands = game.summary()["hands"]
    assert hands[0] == ["B1", "B2"] and hands[3] == ["B6", "ZAPFENSTREICH"]
    assert len(hands[1]) == 1 and sorted([hands[1][0], hands[2][3]]) == ["B4", "B5"]
    assert hands[2][:3] == ["B8", "B7", "B3"] and len(hands[2]) == 7  # drew up to 7
    assert game.to_act() == [3] and conserved(game)


def test_a_victims_pruegel_keeps_the_card_unless_the_thief_answers() -> None:
    game = schnorrer_game()
    act(game, 3, "pass")
    act(game, 0, "pass")
    act(game, 1, "respond", card="PRUEGEL")
    assert act(game, 2, "pass")[1] == {"type": "card_kept", "seat": 1}
    assert game.summary()["hands"][1] == ["B4", "B5"]


def test_a_random_take_is_fixed_by_the_seed() -> None:
    def robbed(seed: int) -> list[str]:
        game = dealt([list(hand) for hand in HANDS], dealer=1, seed=seed)
        act(game, 2, "action", card="SCHNORRER")
        for seat in (3, 0, 1):
            act(game, seat, "pass")
        return game.summary()["hands"][2][2:5]

    assert robbed(4) == robbed(4)
    assert len({tuple(robbed(seed)) for seed in range(12)}) > 1


def test_a_pick_that_no_longer_exists_falls_back_to_a_random_card() -> None:
    game = schnorrer_game(s1=2)
    act(game, 3, "pass")
    act(game, 0, "pass")
    act(game, 1, "respond", card="PRUEGEL")  # seat 1 keeps only two cards
    act(game, 2, "respond", card="PRUEGEL")
    act(game, 1, "pass")
    assert len(game.summary()["hands"][1]) == 1 and conserved(game)


@pytest.mark.parametrize("picks", [
    {"2": 0}, {"4": 0}, {"x": 0}, {"-1": 0}, {"3": 3}, {"3": -1}, {"3": True}, {"3": "0"},
    {"3": 0, 3: 1},
])
def test_bad_picks_are_invalid(picks: dict) -> None:
    game = dealt([list(hand) for hand in HANDS], dealer=1)
    refused(game, 2, {"type": "action", "card": "SCHNORRER", "picks": picks},
            ErrorCode.INVALID_ACTION)


def test_picks_may_use_integer_seat_keys() -> None:
    game = dealt([list(hand) for hand in HANDS], dealer=1)
    act(game, 2, "action", card="SCHNORRER", picks={3: 2})
    act(game, 3, "pass")
    assert game.summary()["hands"][2][-1] == "ZAPFENSTREICH"


def test_seats_with_empty_hands_are_not_robbed_and_no_victim_means_no_effect() -> None:
    game = dealt([[], ["B4"], ["SCHNORRER", "SCHNORRER"], []], dealer=1)
    events = act(game, 2, "action", card="SCHNORRER")
    assert events[1] == {"type": "schnorrer", "seat": 2, "victims": [1]}
    act(game, 1, "pass")
    data = game.to_dict()
    data.update(turn=2, hands=[[], [], ["SCHNORRER"], []])
    lonely = WilliWacker.from_dict(data)
    assert kinds(act(lonely, 2, "action", card="SCHNORRER"))[:3] == [
        "action", "schnorrer", "no_effect"]


def test_the_thief_may_hold_more_than_seven_and_then_draws_nothing() -> None:
    hands = [["B1"], ["B2"], ["SCHNORRER", "B3", "B3", "B3", "B3", "B3", "B3"], ["B4"]]
    game = dealt(hands, dealer=1)
    act(game, 2, "action", card="SCHNORRER")
    for seat in (3, 0):
        act(game, seat, "pass")
    events = act(game, 1, "pass")
    assert not any(event["type"] == "draw" and event["seat"] == 2 for event in events)
    assert game.view(None)["hand_sizes"] == [0, 0, 9, 7]  # seat 3 starts empty and draws


def test_events_and_views_never_name_a_taken_card() -> None:
    game = dealt([list(hand) for hand in HANDS], dealer=1)
    events = act(game, 2, "action", card="SCHNORRER", picks={"3": 0})
    events += act(game, 3, "pass")
    text = json.dumps(events)
    assert "B6" not in text
    assert "B6" not in json.dumps(game.view(0)) and "B6" not in json.dumps(game.view(None))
    assert "picks" not in json.dumps(game.view(2))

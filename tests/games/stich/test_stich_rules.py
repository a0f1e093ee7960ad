"""Willi Stich: one test per FAQ answer, per rule and per ruling of RULES.md."""

from __future__ import annotations

import json
from typing import Any

import pytest

from shared.games.errors import ErrorCode, RuleError, SetupError
from shared.games.stich.cards import DECK
from shared.games.stich.engine import WilliStich
from shared.games.stich.schedule import hand_size, round_kind
from shared.games.stich.scoring import round_points
from tests.support.engines import act, refused
from tests.support.stich import call_in_turn, dealt, finish_round

# --------------------------------------------------------------------- FAQ answers


def test_faq_no_obligation_to_trump() -> None:
    game = dealt([["H7", "CA"], ["HA", "S7"], ["SK", "CK"]], round_no=2)
    call_in_turn(game, {0: 0, 1: 1, 2: 0})
    act(game, 1, "play", card="HA")
    assert {"type": "play", "card": "SK"} in game.legal_actions(2)
    act(game, 2, "play", card="SK")  # void in hearts, holds trump, discards a spade


def test_faq_no_obligation_to_win() -> None:
    game = dealt([["H8", "HA"], ["H9", "S7"], ["H10", "D7"]], round_no=2)
    call_in_turn(game, {0: 0, 1: 1, 2: 0})
    act(game, 1, "play", card="H9")
    act(game, 2, "play", card="H10")
    events = act(game, 0, "play", card="H8")  # holds HA, need not overtake
    assert events[-1] == {"type": "trick", "winner": 2,
                          "cards": [[1, "H9"], [2, "H10"], [0, "H8"]]}


def test_faq_leader_may_lead_trump() -> None:
    game = dealt([["H8", "HA"], ["C8", "HK"], ["H10", "D7"]], round_no=2)
    call_in_turn(game, {0: 0, 1: 1, 2: 0})
    assert {a["card"] for a in game.legal_actions(1)} == {"C8", "HK"}
    act(game, 1, "play", card="C8")


def test_faq_identical_cards_first_played_wins() -> None:
    game = dealt([["CQ", "D8"], ["H7", "S8"], ["CQ", "D9"]], round_no=2)
    call_in_turn(game, {0: 0, 1: 0, 2: 1})
    act(game, 1, "play", card="H7")
    act(game, 2, "play", card="CQ")
    events = act(game, 0, "play", card="CQ")
    assert events[-1]["winner"] == 2


def test_faq_zero_call_scores_five_or_minus_ten_per_trick() -> None:
    game = dealt([["HA"], ["H7"], ["H8"]], round_no=1)
    call_in_turn(game, {1: 0, 2: 0, 0: 0})
    for seat, card in ((1, "H7"), (2, "H8"), (0, "HA")):
        events = act(game, seat, "play", card=card)
    round_over = next(event for event in events if event["type"] == "round_over")
    assert round_over["points"] == [-10, 5, 5]
    assert round_points(0, 2) == -20


def test_faq_totals_can_go_below_zero() -> None:
    game = dealt([["HA"], ["H7"], ["H8"]], round_no=1)
    call_in_turn(game, {1: 1, 2: 1, 0: 1})  # 3 calls for 1 trick: fine for the dealer rule
    for seat, card in ((1, "H7"), (2, "H8"), (0, "HA")):
        act(game, seat, "play", card=card)
    assert game.summary()["scores"] == [10, -10, -10]


@pytest.mark.parametrize("round_no", range(1, 20))
def test_faq_dealer_rule_in_every_round(round_no: int) -> None:
    game = WilliStich.new(4, {"start_round": round_no, "first_dealer": 1}, seed=round_no)
    if game.summary()["phase"] == "choose_trump":
        act(game, 1, "trump", suit="S")
    for seat in (2, 3, 0):
        act(game, seat, "call", tricks=0)
    size = hand_size(round_no)
    message = refused(game, 1, {"type": "call", "tricks": size}, ErrorCode.NOT_ALLOWED)
    assert "dealer rule" in message
    assert [a["tricks"] for a in game.legal_actions(1)] == list(range(size))


def test_faq_first_dealer_is_free_and_the_deal_passes_clockwise_into_the_next_game() -> None:
    game = WilliStich.new(4, {"start_round": 17, "first_dealer": 2}, seed=5)
    dealers = []
    while not game.over:
        dealers.append(game.summary()["dealer"])
        assert game.view(None)["next_dealer"] is None
        finish_round(game)
    assert dealers == [2, 3, 0]
    assert game.view(None)["next_dealer"] == 1
    follow_up = WilliStich.new(4, {"first_dealer": game.view(None)["next_dealer"]}, seed=6)
    assert follow_up.summary()["dealer"] == 1


def test_faq_a_call_stands() -> None:
    game = WilliStich.new(3, {"start_round": 4}, seed=1)
    act(game, 1, "call", tricks=2)
    refused(game, 1, {"type": "call", "tricks": 1}, ErrorCode.NOT_YOUR_TURN)
    refused(game, 1, {"type": "change_call", "tricks": 1}, ErrorCode.INVALID_ACTION)
    call_in_turn(game, {2: 0, 0: 0})
    refused(game, 1, {"type": "call", "tricks": 1}, ErrorCode.WRONG_PHASE)
    assert game.summary()["calls"] == [0, 2, 0]


def test_faq_played_tricks_are_visible_to_all() -> None:
    game = dealt([["H8", "HA"], ["H9", "S7"], ["H10", "D7"]], round_no=2)
    call_in_turn(game, {0: 0, 1: 1, 2: 0})
    for seat, card in ((1, "H9"), (2, "H10"), (0, "HA")):
        act(game, seat, "play", card=card)
    expected = [{"cards": [[1, "H9"], [2, "H10"], [0, "HA"]], "winner": 0}]
    for viewer in (None, 0, 1, 2):
        assert game.view(viewer)["played_tricks"] == expected


def test_faq_failing_to_follow_is_refused_and_the_seat_follows_properly() -> None:
    game = dealt([["H7", "CA"], ["HA", "S7"], ["SK", "CK"]], round_no=2)
    call_in_turn(game, {0: 0, 1: 1, 2: 0})
    act(game, 1, "play", card="HA")
    act(game, 2, "play", card="CK")
    refused(game, 0, {"type": "play", "card": "CA"}, ErrorCode.MUST_FOLLOW)
    assert game.to_act() == [0]
    assert game.legal_actions(0) == [{"type": "play", "card": "H7"}]
    act(game, 0, "play", card="H7")


def test_faq_nobody_joins_a_running_game() -> None:
    game = WilliStich.new(3, seed=1)
    refused(game, 1, {"type": "join"}, ErrorCode.INVALID_ACTION)
    with pytest.raises(RuleError) as caught:
        game.apply(3, {"type": "chat", "text": "hello"})
    assert caught.value.code == ErrorCode.INVALID_ACTION


def test_faq_a_leaver_total_is_frozen_and_counts_at_the_end() -> None:
    game = dealt([["HA", "SA"], ["H7", "S7"], ["H8", "S8"]], round_no=18, dealer=2)
    call_in_turn(game, {0: 2, 1: 0, 2: 1})
    finish_round(game)
    assert game.summary()["scores"] == [20, 5, -10]
    act(game, 0, "leave")
    finish_round(game)  # round 19 among seats 1 and 2
    summary = game.summary()
    assert summary["over"] and summary["scores"][0] == 20
    assert summary["winners"] == [0]
    assert summary["completed_rounds"][-1]["calls"][0] is None
    assert summary["completed_rounds"][-1]["points"][0] == 0


def test_faq_table_talk_except_in_the_forehead_round() -> None:
    game = WilliStich.new(3, {"start_round": 18}, seed=2)
    before = game.to_dict()
    assert act(game, 2, "chat", text="I have a king") == [
        {"type": "chat", "seat": 2, "text": "I have a king"}]
    assert game.to_dict() == before
    finish_round(game)
    assert game.summary()["round"] == 19
    assert not game.view(0)["chat_allowed"]
    refused(game, 0, {"type": "chat", "text": "you have a king"}, ErrorCode.NOT_ALLOWED)
    call_in_turn(game, {0: 0, 1: 0, 2: 0})
    refused(game, 2, {"type": "chat", "text": "hm"}, ErrorCode.NOT_ALLOWED)


# ---------------------------------------------------------------- schedule and deal


def test_schedule_has_19_rounds_of_1_to_10_and_back() -> None:
    assert [hand_size(r) for r in range(1, 20)] == [*range(1, 11), *range(9, 0, -1)]
    special = {r: round_kind(r).value for r in range(1, 20) if round_kind(r).value != "normal"}
    assert special == {5: "trump_choice", 15: "trump_choice", 7: "no_trump", 13: "no_trump",
                       10: "blind", 19: "forehead"}


@pytest.mark.parametrize(("seats", "round_no"), [(6, 10), (6, 1), (6, 19), (3, 10), (5, 9)])
def test_two_decks_suffice_for_every_deal(seats: int, round_no: int) -> None:
    summary = WilliStich.new(seats, {"start_round": round_no}, seed=seats).summary()
    cards = [card for hand in summary["hands"] for card in hand] + [summary["turned"]]
    assert len(cards) == seats * hand_size(round_no) + 1
    assert all(cards.count(card) <= 2 for card in cards)
    assert all(card in DECK for card in cards)


def test_trump_is_the_suit_of_the_turned_card_visible_to_all() -> None:
    game = dealt([["H8", "HA"], ["H9", "S7"], ["H10", "D7"]], turned="D9", round_no=2)
    assert game.summary()["trump"] == "D"
    assert game.view(None)["turned"] == "D9" and game.view(1)["trump"] == "D"


@pytest.mark.parametrize("round_no", [5, 15])
def test_trump_choice_round_dealer_names_trump_before_calls(round_no: int) -> None:
    game = WilliStich.new(3, {"start_round": round_no, "first_dealer": 1}, seed=3)
    summary = game.summary()
    assert (summary["phase"], summary["to_act"], summary["trump"], summary["turned"]) == (
        "choose_trump", [1], None, None)
    assert game.view(1)["hand"] == summary["hands"][1]
    refused(game, 2, {"type": "call", "tricks": 0}, ErrorCode.WRONG_PHASE)
    refused(game, 2, {"type": "trump", "suit": "H"}, ErrorCode.NOT_YOUR_TURN)
    refused(game, 1, {"type": "trump", "suit": "X"}, ErrorCode.INVALID_ACTION)
    refused(game, 1, {"type": "trump"}, ErrorCode.INVALID_ACTION)
    assert act(game, 1, "trump", suit="H") == [{"type": "trump", "seat": 1, "suit": "H"}]
    summary = game.summary()
    assert (summary["phase"], summary["to_act"], summary["trump"]) == ("call", [2], "H")
    refused(game, 1, {"type": "trump", "suit": "S"}, ErrorCode.WRONG_PHASE)


def test_trump_choice_default_is_the_dealers_longest_suit() -> None:
    hands = [["C7", "C8", "C9", "S7", "S8"], ["D7", "D8", "D9", "DA", "H7"],
             ["H8", "H9", "S9", "S10", "SJ"]]
    game = WilliStich.new(3, {"start_round": 5, "first_dealer": 1}, 0,
                          {"rounds": [{"hands": hands, "turned": None}]})
    assert game.default_action(1) == {"type": "trump", "suit": "D"}
    assert game.default_action(0) is None


@pytest.mark.parametrize("round_no", [7, 13])
def test_no_trump_rounds_turn_nothing_and_the_led_suit_wins(round_no: int) -> None:
    game = WilliStich.new(3, {"start_round": round_no}, seed=4)
    summary = game.summary()
    assert (summary["trump"], summary["turned"], summary["phase"]) == (None, None, "call")


def test_an_off_suit_plain_card_never_wins() -> None:
    game = dealt([["SA", "D8"], ["H9", "S8"], ["CA", "D9"]], round_no=2, turned="D7")
    call_in_turn(game, {0: 0, 1: 0, 2: 0})
    act(game, 1, "play", card="H9")
    act(game, 2, "play", card="CA")
    assert act(game, 0, "play", card="SA")[-1]["winner"] == 1


def test_trump_beats_a_higher_card_of_the_led_suit() -> None:
    game = dealt([["C8", "D8"], ["HA", "S8"], ["SA", "D9"]], round_no=2, turned="C7")
    call_in_turn(game, {0: 0, 1: 0, 2: 0})
    act(game, 1, "play", card="HA")
    act(game, 2, "play", card="SA")
    assert act(game, 0, "play", card="C8")[-1]["winner"] == 0


def test_blind_round_hides_every_hand_until_all_calls_are_made() -> None:
    game = WilliStich.new(4, {"start_round": 10, "first_dealer": 3}, seed=8)
    for _ in range(3):
        seat = game.to_act()[0]
        assert all(game.view(viewer)["hands"] == [None] * 4 for viewer in (None, 0, 1, 2, 3))
        assert game.view(seat)["hand"] is None and game.view(seat)["hand_counts"] == [10] * 4
        act(game, seat, "call", tricks=2)
    act(game, 3, "call", tricks=3)
    hands = game.summary()["hands"]
    for seat in range(4):
        assert game.view(seat)["hand"] == hands[seat]
    assert game.view(None)["hands"] == [None] * 4


def test_forehead_round_each_seat_sees_every_card_but_its_own() -> None:
    game = dealt([["SK"], ["D8"], ["C10"]], turned="H9", round_no=19, dealer=2)
    for seat in range(3):
        expected = [None if owner == seat else hand
                    for owner, hand in enumerate([["SK"], ["D8"], ["C10"]])]
        assert game.view(seat)["hands"] == expected
        assert game.view(seat)["hand"] is None
    assert game.view(None)["hands"] == [None] * 3
    call_in_turn(game, {0: 1, 1: 0, 2: 1})
    assert game.legal_actions(0) == [{"type": "play"}]
    assert "SK" not in json.dumps(game.view(0))


def test_forehead_card_is_played_unseen_whatever_is_named() -> None:
    game = dealt([["SK"], ["D8"], ["C10"]], turned="H9", round_no=19, dealer=2)
    call_in_turn(game, {0: 1, 1: 0, 2: 1})
    assert act(game, 0, "play") == [{"type": "play", "seat": 0, "card": "SK"}]
    assert act(game, 1, "play", card="HA")[0] == {"type": "play", "seat": 1, "card": "D8"}
    refused(game, 2, {"type": "play", "card": "Z9"}, ErrorCode.INVALID_ACTION)
    events = act(game, 2, "play", card="C10")
    assert [e["type"] for e in events] == ["play", "trick", "round_over", "game_over"]


def test_a_card_must_be_named_outside_the_forehead_round() -> None:
    game = dealt([["HA"], ["H7"], ["H8"]], round_no=1)
    call_in_turn(game, {1: 0, 2: 0, 0: 0})
    refused(game, 1, {"type": "play"}, ErrorCode.INVALID_ACTION)


# --------------------------------------------------------------------- calls and play


def test_calls_start_left_of_the_dealer_and_the_dealer_calls_last() -> None:
    game = WilliStich.new(4, {"start_round": 2, "first_dealer": 2}, seed=1)
    order = []
    while game.summary()["phase"] == "call":
        order.append(game.to_act()[0])
        act(game, order[-1], "call", tricks=1)
    assert order == [3, 0, 1, 2]


def test_call_limits() -> None:
    game = WilliStich.new(3, {"start_round": 2}, seed=1)
    refused(game, 1, {"type": "call", "tricks": 3}, ErrorCode.NOT_ALLOWED)
    refused(game, 1, {"type": "call", "tricks": -1}, ErrorCode.INVALID_ACTION)
    refused(game, 1, {"type": "call", "tricks": True}, ErrorCode.INVALID_ACTION)
    refused(game, 1, {"type": "call", "tricks": "2"}, ErrorCode.INVALID_ACTION)
    refused(game, 1, {"type": "call", "tricks": 2, "seat": 1}, ErrorCode.INVALID_ACTION)
    act(game, 1, "call", tricks=2)


def test_left_of_dealer_leads_and_the_trick_winner_leads_next() -> None:
    game = dealt([["H8", "HA"], ["H9", "S7"], ["H10", "D7"]], round_no=2)
    call_in_turn(game, {0: 0, 1: 1, 2: 0})
    assert game.to_act() == [1]
    for seat, card in ((1, "H9"), (2, "H10"), (0, "H8")):
        act(game, seat, "play", card=card)
    assert game.to_act() == [2]


def test_a_card_held_twice_is_listed_once() -> None:
    game = dealt([["H8", "H8"], ["H9", "S7"], ["H10", "D7"]], round_no=2)
    call_in_turn(game, {0: 0, 1: 1, 2: 0})
    act(game, 1, "play", card="S7")
    act(game, 2, "play", card="D7")
    assert game.legal_actions(0) == [{"type": "play", "card": "H8"}]


@pytest.mark.parametrize(("call", "taken", "points"), [
    (0, 0, 5), (1, 1, 10), (3, 3, 30), (0, 1, -10), (0, 2, -20), (2, 0, -20), (1, 4, -30)])
def test_scoring(call: int, taken: int, points: int) -> None:
    assert round_points(call, taken) == points


def test_round_over_event_and_the_next_round() -> None:
    game = dealt([["HA"], ["H7"], ["H8"]], round_no=1)
    call_in_turn(game, {1: 0, 2: 0, 0: 0})
    act(game, 1, "play", card="H7")
    act(game, 2, "play", card="H8")
    events = act(game, 0, "play", card="HA")
    assert events[2] == {"type": "round_over", "round": 1, "calls": [0, 0, 0],
                         "tricks": [1, 0, 0], "points": [-10, 5, 5], "scores": [-10, 5, 5]}
    assert events[3]["type"] == "deal" and events[3]["round"] == 2 and events[3]["dealer"] == 1
    assert "hands" not in events[3]


def test_the_game_ends_after_round_19() -> None:
    game = dealt([["SA"], ["D8"], ["C10"]], turned="S9", round_no=19, dealer=2)
    call_in_turn(game, {0: 1, 1: 1, 2: 0})
    act(game, 0, "play")
    act(game, 1, "play")
    events = act(game, 2, "play")
    assert events[-1] == {"type": "game_over", "winners": [0], "scores": [10, -10, 5]}
    summary = game.summary()
    assert summary["over"] and summary["phase"] == "over" and summary["to_act"] == []
    assert summary["calls"] == [1, 1, 0] and summary["round"] == 19
    refused(game, 0, {"type": "chat", "text": "gg"}, ErrorCode.GAME_OVER)
    refused(game, 0, {"type": "leave"}, ErrorCode.GAME_OVER)
    refused(game, 0, {"type": "bogus"}, ErrorCode.INVALID_ACTION)


def test_tied_totals_share_the_win() -> None:
    game = dealt([["SA"], ["D8"], ["C10"]], turned="S9", round_no=19, dealer=2)
    call_in_turn(game, {0: 0, 1: 0, 2: 0})
    for seat in (0, 1, 2):
        act(game, seat, "play")
    assert game.summary()["scores"] == [-10, 5, 5]
    assert game.winners() == [1, 2]


# --------------------------------------------------------------------- code precedence


def test_code_precedence() -> None:
    game = dealt([["H7", "CA"], ["HA", "S7"], ["SK", "CK"]], round_no=2)
    refused(game, 2, {"type": "play", "card": "D7"}, ErrorCode.WRONG_PHASE)
    refused(game, 2, {"type": "call", "tricks": 9}, ErrorCode.NOT_YOUR_TURN)
    refused(game, 1, {"type": "play", "card": "DX"}, ErrorCode.INVALID_ACTION)
    call_in_turn(game, {0: 0, 1: 1, 2: 0})
    refused(game, 2, {"type": "play", "card": "D7"}, ErrorCode.NOT_YOUR_TURN)
    act(game, 1, "play", card="HA")
    act(game, 2, "play", card="SK")
    refused(game, 0, {"type": "play", "card": "D7"}, ErrorCode.CARD_NOT_IN_HAND)
    refused(game, 0, {"type": "play", "card": "CA"}, ErrorCode.MUST_FOLLOW)
    not_a_mapping: Any = ["play"]
    with pytest.raises(RuleError) as caught:
        game.apply(0, not_a_mapping)
    assert caught.value.code == ErrorCode.INVALID_ACTION


# ---------------------------------------------------------------------------- leaving


def test_leaving_cancels_the_round_and_the_same_dealer_deals_again() -> None:
    game = WilliStich.new(4, {"start_round": 3, "first_dealer": 0}, seed=11)
    call_in_turn(game, {1: 1, 2: 1, 3: 1, 0: 1})
    act(game, 1, game.legal_actions(1)[0]["type"], card=game.legal_actions(1)[0]["card"])
    events = act(game, 2, "leave")
    assert [e["type"] for e in events] == ["leave", "round_cancelled", "deal"]
    assert events[0] == {"type": "leave", "seat": 2, "score": 0}
    assert events[2]["dealer"] == 0 and events[2]["round"] == 3
    summary = game.summary()
    assert summary["active"] == [True, True, False, True]
    assert summary["calls"] == [None] * 4 and summary["trick"] == []
    assert [len(hand) for hand in summary["hands"]] == [3, 3, 0, 3]
    assert summary["completed_rounds"] == [] and summary["to_act"] == [1]


def test_when_the_dealer_leaves_the_next_remaining_seat_deals() -> None:
    game = WilliStich.new(5, {"start_round": 4, "first_dealer": 1}, seed=12)
    act(game, 2, "leave")
    assert game.summary()["dealer"] == 1
    act(game, 1, "leave")
    assert game.summary()["dealer"] == 3 and game.to_act() == [4]


def test_after_a_leave_only_the_seats_still_in_call_play_and_deal() -> None:
    game = WilliStich.new(4, {"start_round": 2, "first_dealer": 3}, seed=13)
    act(game, 0, "leave")
    assert game.to_act() == [1]
    call_in_turn(game, {1: 1, 2: 0, 3: 0})  # dealer 3 may not call 1: 1+0+1 = 2
    assert game.summary()["calls"] == [None, 1, 0, 0]
    first = game.to_act()[0]
    act(game, first, "play", card=game.legal_actions(first)[0]["card"])
    for _ in range(2):
        seat = game.to_act()[0]
        events = act(game, seat, "play", card=game.legal_actions(seat)[0]["card"])
    assert events[-1]["type"] == "trick" and len(events[-1]["cards"]) == 3
    finish_round(game)
    assert game.summary()["dealer"] == 1  # 3 -> (0 left) -> 1


def test_dealer_rule_counts_only_seats_still_in() -> None:
    game = WilliStich.new(4, {"start_round": 3, "first_dealer": 3}, seed=14)
    act(game, 1, "leave")
    act(game, 0, "call", tricks=1)
    act(game, 2, "call", tricks=1)
    refused(game, 3, {"type": "call", "tricks": 1}, ErrorCode.NOT_ALLOWED)


def test_leaving_during_the_trump_choice_redeals_for_the_same_dealer() -> None:
    game = WilliStich.new(4, {"start_round": 5, "first_dealer": 0}, seed=15)
    act(game, 3, "leave")
    assert game.summary()["phase"] == "choose_trump" and game.to_act() == [0]
    act(game, 0, "leave")
    assert game.summary()["phase"] == "choose_trump" and game.to_act() == [1]


def test_a_seat_that_left_can_do_nothing_more() -> None:
    game = WilliStich.new(3, {"start_round": 2, "first_dealer": 2}, seed=16)
    act(game, 1, "leave")
    refused(game, 1, {"type": "leave"}, ErrorCode.NOT_ALLOWED)
    refused(game, 1, {"type": "chat", "text": "bye"}, ErrorCode.NOT_ALLOWED)
    refused(game, 1, {"type": "call", "tricks": 0}, ErrorCode.NOT_YOUR_TURN)
    assert game.legal_actions(1) == [] and game.default_action(1) is None
    assert not game.view(1)["chat_allowed"] and game.view(0)["chat_allowed"]
    assert game.view(1)["hands"] == [None, None, None]


def test_a_seat_that_left_sees_no_forehead() -> None:
    game = WilliStich.new(3, {"start_round": 19, "first_dealer": 0}, seed=17)
    act(game, 1, "leave")
    assert game.view(1)["hands"] == [None, None, None]
    assert game.view(0)["hands"][2] is not None and game.view(0)["hands"][0] is None


def test_the_game_ends_when_fewer_than_two_remain_and_totals_decide() -> None:
    game = dealt([["HA"], ["H7"], ["H8"]], round_no=1)
    call_in_turn(game, {1: 0, 2: 0, 0: 0})
    for seat, card in ((1, "H7"), (2, "H8"), (0, "HA")):
        act(game, seat, "play", card=card)
    assert game.summary()["scores"] == [-10, 5, 5]
    act(game, 2, "leave")
    events = act(game, 0, "leave")
    assert [e["type"] for e in events] == ["leave", "round_cancelled", "game_over"]
    assert events[-1] == {"type": "game_over", "winners": [1, 2], "scores": [-10, 5, 5]}
    summary = game.summary()
    assert summary["over"] and summary["to_act"] == [] and summary["hands"] == [[], [], []]
    assert summary["active"] == [False, True, False] and summary["round"] == 2
    refused(game, 1, {"type": "leave"}, ErrorCode.GAME_OVER)


# ------------------------------------------------------------------------------- chat


def test_chat_text_length_is_checked() -> None:
    game = WilliStich.new(3, seed=1)
    act(game, 0, "chat", text="x" * 200)
    for bad in ("x" * 201, "", "   "):
        refused(game, 0, {"type": "chat", "text": bad}, ErrorCode.INVALID_ACTION)
    refused(game, 0, {"type": "chat"}, ErrorCode.INVALID_ACTION)
    refused(game, 0, {"type": "chat", "text": 5}, ErrorCode.INVALID_ACTION)


# ---------------------------------------------------------------------- setup and state


@pytest.mark.parametrize(("seats", "options", "setup"), [
    (2, {}, None),
    (7, {}, None),
    (3, {"start_round": 0}, None),
    (3, {"start_round": 20}, None),
    (3, {"first_dealer": 3}, None),
    (3, {"dealer": 0}, None),
    (3, {"start_round": "1"}, None),
    (3, {"start_round": 1}, {"rounds": [{"hands": [["H7"], ["H8"]], "turned": "C7"}]}),
    (3, {"start_round": 1}, {"rounds": [{"hands": [["H7"], ["H8"], ["H9", "HA"]]}]}),
    (3, {"start_round": 1}, {"rounds": [{"hands": [["H7"], ["H7"], ["H7"]]}]}),
    (3, {"start_round": 1}, {"rounds": [{"hands": [["H7"], ["H8"], ["X9"]]}]}),
    (3, {"start_round": 7}, {"rounds": [{"hands": [[s + r for r in "789JQKA"] for s in "CSH"],
                                         "turned": "D7"}]}),
    (3, {"start_round": 19}, {"rounds": [{"hands": [["H7"], ["H8"], ["H9"]]}] * 2}),
    (3, {}, {"deals": []}),
])
def test_bad_setups_are_refused(seats: int, options: dict, setup: dict | None) -> None:
    with pytest.raises(SetupError):
        WilliStich.new(seats, options, 0, setup)


def test_a_missing_turned_card_is_drawn_from_the_seed() -> None:
    setup = {"rounds": [{"hands": [["H7"], ["H8"], ["H9"]], "turned": None}]}
    first = WilliStich.new(3, {}, 3, setup).summary()["turned"]
    assert first == WilliStich.new(3, {}, 3, setup).summary()["turned"]
    assert first in DECK


def test_listed_rounds_are_used_in_order_then_the_seed_deals() -> None:
    rounds = [{"hands": [["H7"], ["H8"], ["H9"]], "turned": "C7"},
              {"hands": [["S7", "S8"], ["D7", "D8"], ["C9", "C10"]], "turned": "HA"}]
    game = WilliStich.new(3, {"start_round": 1}, 0, {"rounds": rounds})
    finish_round(game)
    assert game.summary()["hands"] == rounds[1]["hands"] and game.summary()["turned"] == "HA"
    finish_round(game)
    assert game.summary()["round"] == 3


def test_state_round_trips_through_json_and_play_continues_identically() -> None:
    game = WilliStich.new(5, {"start_round": 8}, seed=21)
    for _ in range(17):
        seat = game.to_act()[0]
        game.apply(seat, game.default_action(seat) or {})
    copy = WilliStich.from_dict(json.loads(json.dumps(game.to_dict())))
    assert copy.to_dict() == game.to_dict() and copy.summary() == game.summary()
    while not game.over:
        seat = game.to_act()[0]
        action = game.default_action(seat)
        assert action is not None
        assert copy.apply(seat, action) == game.apply(seat, action)
    assert copy.to_dict() == game.to_dict()


def test_from_dict_rejects_foreign_data() -> None:
    data = WilliStich.new(3, seed=1).to_dict()
    del data["scores"]
    with pytest.raises(KeyError):
        WilliStich.from_dict(data)

"""Willi Wacker: deck, deal, trays, drawing and the action cards outside duels."""

from __future__ import annotations

from collections import Counter

import pytest

from shared.games.errors import ErrorCode, SetupError
from shared.games.wacker.cards import DECK, HAND_SIZE
from shared.games.wacker.engine import WilliWacker
from shared.games.wacker.trays import beer_counts, extension_options, forms_group, lay_options
from tests.support.engines import act, refused
from tests.support.wacker import conserved, dealt, drained, kinds, lay_any

INVALID = ErrorCode.INVALID_ACTION


# -- deck and deal ----------------------------------------------------------------


def test_deck_has_110_cards_in_the_ruled_split() -> None:
    counts = Counter(DECK)
    assert len(DECK) == 110
    assert all(counts[f"B{v}"] == 10 for v in range(1, 9))
    assert (counts["TRINK"], counts["SCHNORRER"], counts["FLORA"], counts["PRUEGEL"],
            counts["ZAPFENSTREICH"]) == (12, 4, 5, 6, 3)


@pytest.mark.parametrize("seats", [3, 4, 5, 6])
def test_deal_gives_seven_each_and_the_rest_is_the_talon(seats: int) -> None:
    game = WilliWacker.new(seats, {}, 5)
    summary = game.summary()
    assert all(len(hand) == HAND_SIZE for hand in summary["hands"])
    assert summary["talon_size"] == 110 - HAND_SIZE * seats
    assert conserved(game)


def test_the_seat_left_of_the_dealer_starts() -> None:
    assert WilliWacker.new(4, {}, 1).to_act() == [1]
    game = WilliWacker.new(4, {"first_dealer": 3}, 1)
    assert (game.summary()["dealer"], game.to_act()) == (3, [0])


def test_the_seed_fixes_the_deal() -> None:
    assert WilliWacker.new(3, {}, 9).to_dict() == WilliWacker.new(3, {}, 9).to_dict()
    assert WilliWacker.new(3, {}, 9).to_dict() != WilliWacker.new(3, {}, 10).to_dict()


def test_setup_fixes_hands_and_the_talon_top_and_the_rest_follows() -> None:
    game = dealt([["B1"], ["B2", "B3"], []], talon=["TRINK", "B8"])
    assert game.summary()["hands"] == [["B1"], ["B2", "B3"], []]
    assert game.state.talon[:2] == ["TRINK", "B8"]
    assert len(game.state.talon) == 110 - 3
    assert conserved(game)


def test_a_setup_that_names_all_110_cards_deals_exactly_that_talon() -> None:
    hands = [list(DECK[seat * HAND_SIZE:(seat + 1) * HAND_SIZE]) for seat in range(3)]
    talon = list(reversed(DECK[3 * HAND_SIZE:]))
    game = dealt(hands, talon=talon)
    assert game.summary()["hands"] == hands
    assert game.state.talon == talon
    assert conserved(game)


def test_a_setup_that_puts_every_card_in_a_hand_is_refused_for_its_empty_talon() -> None:
    with pytest.raises(SetupError, match="talon must not start empty"):
        WilliWacker.new(3, {}, 0, {"rounds": [{"hands": [list(DECK[:100]), list(DECK[100:]), []]}]})


@pytest.mark.parametrize(("seats", "options", "setup"), [
    (2, {}, None),
    (7, {}, None),
    (3, {"colour": 1}, None),
    (3, {"target": "200"}, None),
    (3, {"target": 0}, None),
    (3, {"max_rounds": 0}, None),
    (3, {"first_dealer": 3}, None),
    (3, {"first_dealer": None}, None),
    (3, {}, {"hands": []}),
    (3, {}, {"rounds": [{"hands": [[], []]}]}),
    (3, {}, {"rounds": [{"hands": [["B9"], [], []]}]}),
    (3, {}, {"rounds": [{"hands": [["FLORA"] * 6, [], []]}]}),
    (3, {}, {"rounds": [{"hands": [[], [], []], "talon": "B1"}]}),
    (3, {}, {"rounds": [{"hands": [[], [], []], "extra": 1}]}),
    (3, {}, {"rounds": [{"hands": [list(DECK), [], []]}]}),
])
def test_bad_seats_options_and_setups_are_refused(seats: int, options: dict, setup: dict) -> None:
    with pytest.raises(SetupError):
        WilliWacker.new(seats, options, 0, setup)


# -- lay ----------------------------------------------------------------------------


def test_sets_runs_and_single_cards_become_trays_numbered_in_order() -> None:
    game = dealt([["B5", "B5", "B5", "B1"], ["B4", "B2", "B3"], ["B7"]])
    events = act(game, 0, "lay", cards=["B5", "B5", "B5"])
    assert events[0] == {"type": "lay", "seat": 0, "tray": "t1", "cards": ["B5", "B5", "B5"]}
    act(game, 1, "lay", cards=["B4", "B2", "B3"])
    act(game, 2, "lay", cards=["B7"])
    assert game.summary()["trays"] == [
        {"id": "t1", "owner": 0, "cards": ["B5", "B5", "B5"]},
        {"id": "t2", "owner": 1, "cards": ["B2", "B3", "B4"]},
        {"id": "t3", "owner": 2, "cards": ["B7"]},
    ]


@pytest.mark.parametrize("cards", [
    ["B8", "B1"],          # no wrap-around
    ["B2", "B4"],          # gap
    ["B2", "B3", "B3"],    # a run holds each value once
    ["B5", "TRINK"],       # never beer and an action card together
    ["TRINK"],             # an action card is no tray
])
def test_cards_that_are_no_set_or_run_are_refused(cards: list[str]) -> None:
    game = dealt([["B8", "B1", "B2", "B3", "B3", "B4", "B5", "TRINK"], [], ["B1"]])
    refused(game, 0, {"type": "lay", "cards": cards}, ErrorCode.NO_MATCH)


def test_a_card_not_held_beats_no_match() -> None:
    game = dealt([["B1", "B5"], ["B2"], ["B3"]])
    refused(game, 0, {"type": "lay", "cards": ["B1", "B7"]}, ErrorCode.CARD_NOT_IN_HAND)
    refused(game, 0, {"type": "lay", "cards": ["B5", "B5"]}, ErrorCode.CARD_NOT_IN_HAND)


@pytest.mark.parametrize("action", [
    {"type": "dance"},
    {},
    {"type": "lay"},
    {"type": "lay", "cards": []},
    {"type": "lay", "cards": "B1"},
    {"type": "lay", "cards": ["b1"]},
    {"type": "lay", "cards": [1]},
    {"type": "lay", "cards": ["B1"], "tray": "t1"},
    {"type": "extend", "tray": 1, "cards": ["B1"]},
    {"type": "action", "card": "TRINKEN"},
    {"type": "action", "card": "PRUEGEL", "tray": "t1"},
    {"type": "action", "card": "B1", "tray": "t1"},
    {"type": "action", "card": "TRINK", "picks": {}},
    {"type": "pass", "card": "PRUEGEL"},
])
def test_malformed_actions_are_invalid(action: dict) -> None:
    refused(dealt([["B1", "TRINK", "PRUEGEL"], ["B2"], ["B3"]]), 0, action, INVALID)


def test_seats_outside_the_table_are_invalid() -> None:
    game = dealt([["B1"], ["B2"], ["B3"]])
    refused(game, 3, {"type": "lay", "cards": ["B1"]}, INVALID)
    refused(game, -1, {"type": "lay", "cards": ["B1"]}, INVALID)


def test_only_the_seat_on_turn_plays_and_only_turn_actions() -> None:
    game = dealt([["B1"], ["B2"], ["B3"]])
    refused(game, 1, {"type": "lay", "cards": ["B2"]}, ErrorCode.NOT_YOUR_TURN)
    refused(game, 0, {"type": "pass"}, ErrorCode.WRONG_PHASE)
    refused(game, 0, {"type": "respond", "card": "PRUEGEL"}, ErrorCode.WRONG_PHASE)
    refused(game, 1, {"type": "pass"}, ErrorCode.WRONG_PHASE)


def test_lay_options_list_every_set_and_run() -> None:
    options = lay_options(beer_counts(["B2", "B3", "B3", "B4", "B7", "TRINK"]))
    assert sorted(options) == sorted([
        ["B2"], ["B3"], ["B3", "B3"], ["B4"], ["B7"],
        ["B2", "B3"], ["B2", "B3", "B4"], ["B3", "B4"],
    ])
    assert all(forms_group(cards) for cards in options)


# -- extend -------------------------------------------------------------------------


def test_a_set_grows_by_equal_values_and_a_run_at_either_end() -> None:
    game = dealt([["B5", "B5", "B5", "B1"], ["B3", "B4", "B2", "B5", "B6"], ["B8", "B8"]])
    act(game, 0, "lay", cards=["B5", "B5"])
    act(game, 1, "lay", cards=["B3", "B4"])
    act(game, 2, "lay", cards=["B8"])
    act(game, 0, "extend", tray="t1", cards=["B5"])
    act(game, 1, "extend", tray="t2", cards=["B2"])
    act(game, 2, "extend", tray="t3", cards=["B8"])
    act(game, 0, "lay", cards=["B1"])
    act(game, 1, "extend", tray="t2", cards=["B5"])
    trays = {tray["id"]: tray["cards"] for tray in game.summary()["trays"]}
    assert trays == {"t1": ["B5"] * 3, "t2": ["B2", "B3", "B4", "B5"], "t3": ["B8", "B8"],
                     "t4": ["B1"]}


def test_a_run_may_grow_at_both_ends_in_one_extend() -> None:
    game = dealt([["B3", "B4", "B2", "B5", "B6"], ["B1"], ["B1"]])
    act(game, 0, "lay", cards=["B3", "B4"])
    act(game, 1, "lay", cards=["B1"])
    act(game, 2, "lay", cards=["B1"])
    events = act(game, 0, "extend", tray="t1", cards=["B6", "B2", "B5"])
    assert events[0] == {"type": "extend", "seat": 0, "tray": "t1", "cards": ["B2", "B5", "B6"]}
    assert game.summary()["trays"][0]["cards"] == ["B2", "B3", "B4", "B5", "B6"]


@pytest.mark.parametrize(("cards", "shape"), [
    (["B4", "B4"], ["B4", "B4", "B4"]),
    (["B5"], ["B4", "B5"]),
    (["B2", "B3"], ["B2", "B3", "B4"]),
    (["B3", "B5"], ["B3", "B4", "B5"]),
])
def test_a_one_card_tray_may_become_a_set_or_a_run(cards: list[str], shape: list[str]) -> None:
    game = dealt([["B4", *cards], ["B1"], ["B1"]])
    act(game, 0, "lay", cards=["B4"])
    act(game, 1, "lay", cards=["B1"])
    act(game, 2, "lay", cards=["B1"])
    act(game, 0, "extend", tray="t1", cards=cards)
    assert game.summary()["trays"][0]["cards"] == shape


def test_extension_options_cover_sets_runs_and_both_ends() -> None:
    single = extension_options(["B4"], beer_counts(["B4", "B4", "B3", "B5", "B6"]))
    assert sorted(single) == sorted([
        ["B4"], ["B4", "B4"], ["B3"], ["B5"], ["B5", "B6"], ["B3", "B5"], ["B3", "B5", "B6"],
    ])
    assert extension_options(["B4", "B4"], beer_counts(["B3", "B5", "B4"])) == [["B4"]]
    top = extension_options(["B7", "B8"], beer_counts(["B6", "B5", "B8", "B1"]))
    assert sorted(top) == [["B5", "B6"], ["B6"]]


def test_extend_refusals_follow_the_code_precedence() -> None:
    game = dealt([["B5", "B5", "B6", "B4", "TRINK", "B2"], ["B3", "B4", "B7"], ["B1", "B1"]])
    act(game, 0, "lay", cards=["B5", "B5"])
    act(game, 1, "lay", cards=["B3", "B4"])
    act(game, 2, "lay", cards=["B1"])
    extend = {"type": "extend", "tray": "t1"}
    refused(game, 0, {**extend, "cards": ["B6"]}, ErrorCode.NO_MATCH)  # a set stays a set
    refused(game, 0, {**extend, "cards": ["TRINK"]}, ErrorCode.NO_MATCH)
    refused(game, 0, {**extend, "cards": ["B6"] * 8}, ErrorCode.CARD_NOT_IN_HAND)
    refused(game, 0, {**extend, "tray": "t9", "cards": ["B6"]}, ErrorCode.CARD_NOT_IN_HAND)
    refused(game, 0, {**extend, "tray": "t2", "cards": ["B4"]}, ErrorCode.NO_MATCH)  # middle
    refused(game, 0, {**extend, "tray": "t2", "cards": ["B6"]}, ErrorCode.NO_MATCH)  # gap
    refused(game, 0, {**extend, "tray": "t2", "cards": ["B2"]}, ErrorCode.NOT_ALLOWED)
    act(game, 0, "action", card="TRINK", tray="t1")
    act(game, 1, "lay", cards=["B7"])
    act(game, 2, "lay", cards=["B1"])
    refused(game, 0, {**extend, "cards": ["B6"]}, ErrorCode.CARD_NOT_IN_HAND)  # drunk


# -- drawing ------------------------------------------------------------------------


def test_draw_up_to_seven_after_the_turn_and_first_when_starting_empty() -> None:
    talon = ["TRINK", "FLORA", "B8", "PRUEGEL", "ZAPFENSTREICH", "SCHNORRER", "B1", "B2"]
    game = dealt([["B1", "B2", "B3", "B4", "B5", "B6", "B7"], [], ["B8"]], talon=talon)
    events = act(game, 0, "lay", cards=["B1", "B2", "B3", "B4", "B5", "B6", "B7"])
    assert events[1:] == [{"type": "draw", "seat": 0, "count": 7}, {"type": "turn", "seat": 1},
                          {"type": "draw", "seat": 1, "count": 7}]
    assert game.summary()["hands"][0] == talon[:7]
    assert game.summary()["hands"][1][0] == "B2"
    assert game.summary()["talon_size"] == 110 - 8 - 14


def test_no_draw_with_seven_or_more_cards() -> None:
    game = dealt([["B1"] * 9, ["B2"], ["B3"]])
    assert kinds(act(game, 0, "lay", cards=["B1"])) == ["lay", "turn"]
    assert game.summary()["hands"][0] == ["B1"] * 8


def test_a_short_talon_gives_what_is_left() -> None:
    game = drained(dealt([["B1", "B2", "B3", "B4", "B5", "B6", "B7"], ["B2"], ["B3"]]), keep=2)
    events = act(game, 0, "lay", cards=["B1", "B2", "B3"])
    assert {"type": "draw", "seat": 0, "count": 2} in events
    assert game.summary()["talon_size"] == 0 and game.summary()["round"] == 1


def test_an_answer_is_replaced_only_at_the_end_of_the_own_next_turn() -> None:
    game = dealt([["B1", "FLORA"], ["B2", "PRUEGEL", "B3"], ["B8"]],
                 talon=["B4"] * 5 + ["B5"] * 7 + ["B6"] * 6)
    act(game, 0, "lay", cards=["B1"])
    act(game, 1, "lay", cards=["B2"])
    act(game, 2, "lay", cards=["B8"])
    act(game, 0, "action", card="FLORA", tray="t2")
    act(game, 1, "respond", card="PRUEGEL")
    act(game, 0, "pass")
    assert game.view(None)["hand_sizes"] == [7, 6, 7]
    act(game, 1, "lay", cards=["B3"])
    assert game.view(None)["hand_sizes"] == [7, 7, 7]


# -- action cards outside duels -------------------------------------------------------


def test_trink_drinks_an_own_tray() -> None:
    game = dealt([["B4", "B4", "TRINK"], ["B1"], ["B1"]])
    act(game, 0, "lay", cards=["B4", "B4"])
    act(game, 1, "lay", cards=["B1"])
    act(game, 2, "lay", cards=["B1"])
    events = act(game, 0, "action", card="TRINK", tray="t1")
    assert events[:2] == [{"type": "action", "seat": 0, "card": "TRINK", "tray": "t1"},
                          {"type": "drunk", "seat": 0, "tray": "t1", "beers": 8}]
    summary = game.summary()
    assert summary["drunk"] == [8, 0, 0]
    assert [tray["id"] for tray in summary["trays"]] == ["t2", "t3"]
    assert "TRINK" in game.state.discard and conserved(game)


def test_trink_must_name_an_own_face_up_tray_when_there_is_one() -> None:
    game = dealt([["B4", "TRINK", "TRINK"], ["B1"], ["B1"]], talon=["B5"] * 8)
    act(game, 0, "lay", cards=["B4"])
    act(game, 1, "lay", cards=["B1"])
    act(game, 2, "lay", cards=["B1"])
    trink = {"type": "action", "card": "TRINK"}
    refused(game, 0, {**trink, "tray": "t2"}, ErrorCode.NOT_ALLOWED)
    refused(game, 0, trink, ErrorCode.NOT_ALLOWED)
    refused(game, 0, {**trink, "tray": "t7"}, ErrorCode.CARD_NOT_IN_HAND)
    refused(game, 0, {**trink, "card": "FLORA", "tray": "t2"}, ErrorCode.CARD_NOT_IN_HAND)
    act(game, 0, "action", card="TRINK", tray="t1")
    lay_any(game, 1)
    lay_any(game, 2)
    refused(game, 0, {**trink, "tray": "t1"}, ErrorCode.CARD_NOT_IN_HAND)  # already drunk
    assert kinds(act(game, 0, "action", card="TRINK"))[:2] == ["action", "no_effect"]


@pytest.mark.parametrize("card", ["TRINK", "FLORA", "ZAPFENSTREICH", "PRUEGEL"])
def test_an_action_card_without_any_target_is_discarded_without_effect(card: str) -> None:
    game = dealt([[card, "B1"], ["B2"], ["B3"]])
    events = act(game, 0, "action", card=card)
    assert events[:2] == [{"type": "action", "seat": 0, "card": card, "tray": None},
                          {"type": "no_effect", "seat": 0, "card": card}]
    assert game.state.discard == [card] and game.to_act() == [1]
    assert game.summary()["hands"][0][0] == "B1" and conserved(game)


def test_zapfenstreich_discards_a_tray_of_another_seat() -> None:
    game = dealt([["B1", "ZAPFENSTREICH"], ["B2", "B2", "PRUEGEL"], ["B3"]])
    act(game, 0, "lay", cards=["B1"])
    act(game, 1, "lay", cards=["B2", "B2"])
    act(game, 2, "lay", cards=["B3"])
    zapf = {"type": "action", "card": "ZAPFENSTREICH"}
    refused(game, 0, {**zapf, "tray": "t1"}, ErrorCode.NOT_ALLOWED)
    refused(game, 0, zapf, ErrorCode.NOT_ALLOWED)
    events = act(game, 0, "action", card="ZAPFENSTREICH", tray="t2")
    assert {"type": "tray_discarded", "tray": "t2", "owner": 1} in events
    assert [tray["id"] for tray in game.summary()["trays"]] == ["t1", "t3"]
    assert game.summary()["phase"] == "turn" and game.to_act() == [1]  # nothing answers it
    assert game.state.discard == ["ZAPFENSTREICH", "B2", "B2"]


def test_own_trays_are_no_target_for_flora_or_zapfenstreich() -> None:
    game = dealt([["B1", "FLORA", "ZAPFENSTREICH"], ["PRUEGEL"], ["PRUEGEL"]])
    act(game, 0, "lay", cards=["B1"])
    act(game, 1, "action", card="PRUEGEL")
    act(game, 2, "action", card="PRUEGEL")
    legal = game.legal_actions(0)
    assert {"type": "action", "card": "FLORA"} in legal
    assert {"type": "action", "card": "ZAPFENSTREICH"} in legal
    refused(game, 0, {"type": "action", "card": "FLORA", "tray": "t1"}, ErrorCode.NOT_ALLOWED)
    assert kinds(act(game, 0, "action", card="FLORA"))[:2] == ["action", "no_effect"]


def test_pruegel_on_the_own_turn_has_no_effect_and_beer_is_no_action() -> None:
    game = dealt([["PRUEGEL", "B1"], ["B2"], ["B3"]])
    refused(game, 0, {"type": "action", "card": "B1"}, ErrorCode.NOT_ALLOWED)
    refused(game, 0, {"type": "action", "card": "TRINK"}, ErrorCode.CARD_NOT_IN_HAND)
    assert kinds(act(game, 0, "action", card="PRUEGEL"))[:2] == ["action", "no_effect"]

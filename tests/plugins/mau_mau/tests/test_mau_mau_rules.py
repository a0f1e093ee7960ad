"""Mau-Mau: the rules, rulings and refusal codes of RULES.md, one test each, on explicit deals."""

from __future__ import annotations

from typing import Any

import pytest
from mau_mau.cards import full_deck, matches
from mau_mau.engine import MauMau

from shared.games.base import derived_rng
from shared.games.errors import ErrorCode, SetupError
from tests.support.engines import act, refused


def dealt(hands: list[list[str]], up: str = "CK", stock: list[str] | None = None,
          seed: int = 0) -> MauMau:
    """A game from an explicit deal (seat 1 on turn)."""
    return MauMau.new(len(hands), {}, seed, {"hands": hands, "up": up, "stock": stock or []})


# --------------------------------------------------------------------- the deal


def test_the_seeded_deal_gives_hand_size_cards_turns_one_up_and_keeps_the_rest_as_stock() -> None:
    game = MauMau.new(4, {"hand_size": 7}, 11)
    summary = game.summary()
    assert [len(hand) for hand in summary["hands"]] == [7] * 4
    assert len(summary["pile"]) == 1 and len(summary["stock"]) == 32 - 4 * 7 - 1
    every = [card for hand in summary["hands"] for card in hand] + summary["pile"] + summary["stock"]
    assert sorted(every) == sorted(full_deck())
    assert summary["to_act"] == [1] and summary["round"] == 1 and game.current_round == 1
    assert MauMau.new(4, {"hand_size": 7}, 11).to_dict() == game.to_dict()
    assert MauMau.new(4, {"hand_size": 7}, 12).to_dict() != game.to_dict()


def test_seat_1_begins_with_two_seats_too() -> None:
    assert MauMau.new(2, {}, 3).to_act() == [1]


@pytest.mark.parametrize(("seats", "options"), [
    (5, {"hand_size": 7}), (3, {"hand_size": 2}), (3, {"hand_size": 8}), (3, {"hand_size": True}),
    (1, {}), (6, {}), (3, {"cards": 5}),
])
def test_impossible_tables_are_refused_at_creation(seats: int, options: dict[str, Any]) -> None:
    with pytest.raises(SetupError):
        MauMau.new(seats, options, 0)


@pytest.mark.parametrize("setup", [
    {"hands": [["C7"], ["C8"]], "up": "C9"},
    {"hands": [["C7"], ["C8"]], "up": "C9", "stock": [], "extra": 1},
    {"hands": [["C7"]], "up": "C9", "stock": []},
    {"hands": [["C7"], []], "up": "C9", "stock": []},
    {"hands": [["C7"], ["C7"]], "up": "C9", "stock": []},
    {"hands": [["C7"], ["C8"]], "up": "C6", "stock": []},
    {"hands": [["C7"], ["C8"]], "up": "C9", "stock": "C10"},
])
def test_a_bad_setup_is_refused_as_a_whole(setup: dict[str, Any]) -> None:
    with pytest.raises(SetupError):
        MauMau.new(2, {}, 0, setup)


def test_the_turned_up_card_has_no_effect_of_its_own() -> None:
    seven = dealt([["D9"], ["C9", "H9"]], up="C7", stock=["SA", "SK"])
    assert seven.to_act() == [1] and seven.summary()["hands"][1] == ["C9", "H9"]
    jack = dealt([["D9"], ["CA", "H9"]], up="CJ")
    assert jack.summary()["wish"] is None
    assert {"type": "play", "card": "CA"} in jack.legal_actions(1)


# --------------------------------------------------------------------- matching


@pytest.mark.parametrize(("card", "top", "wish", "fits"), [
    ("C9", "CK", None, True), ("H9", "C9", None, True), ("H9", "CK", None, False),
    ("HJ", "CK", None, True), ("HJ", "CJ", None, False), ("HJ", "CJ", "H", False),
    ("S9", "CJ", "S", True), ("C9", "CJ", "S", False), ("CA", "CJ", "C", True),
])
def test_a_card_matches_by_suit_or_rank_a_j_on_all_but_a_j_and_a_wish_rules(
        card: str, top: str, wish: str | None, fits: bool) -> None:
    assert matches(card, top, wish) is fits


def test_legal_actions_are_draw_then_every_matching_card_a_j_once_per_wish() -> None:
    game = dealt([["D9"], ["C9", "SQ", "HJ", "DK"]])
    assert game.legal_actions(1) == [
        {"type": "draw"}, {"type": "play", "card": "C9"},
        *({"type": "play", "card": "HJ", "wish": suit} for suit in "CSHD"),
        {"type": "play", "card": "DK"}]
    assert game.legal_actions(0) == [] and game.default_action(1) == {"type": "draw"}


def test_a_play_puts_the_card_on_top_and_passes_the_turn_left() -> None:
    game = dealt([["D9"], ["C9", "H9"], ["SA"]])
    assert act(game, 1, "play", card="C9") == [{"type": "played", "seat": 1, "card": "C9"}]
    summary = game.summary()
    assert summary["top"] == "C9" and summary["pile"] == ["CK", "C9"]
    assert summary["to_act"] == [2] and summary["hands"][1] == ["H9"]


# --------------------------------------------------------------------- drawing


def test_after_drawing_only_the_drawn_card_may_be_played() -> None:
    game = dealt([["D9"], ["C9", "H9"]], stock=["CA", "S7"])
    assert act(game, 1, "draw") == [{"type": "drew", "seat": 1, "count": 1}]
    assert game.summary()["phase"] == "drawn" and game.summary()["hands"][1] == ["C9", "CA", "H9"]
    assert game.legal_actions(1) == [{"type": "pass"}, {"type": "play", "card": "CA"}]
    refused(game, 1, {"type": "play", "card": "C9"}, ErrorCode.NOT_ALLOWED)
    refused(game, 1, {"type": "play", "card": "H9"}, ErrorCode.NO_MATCH)
    refused(game, 1, {"type": "draw"}, ErrorCode.WRONG_PHASE)
    act(game, 1, "play", card="CA")
    assert game.summary()["drawn"] is None and game.to_act() == [0]


def test_a_drawn_card_that_does_not_match_leaves_only_pass() -> None:
    game = dealt([["D9"], ["C9"]], stock=["H7"])
    act(game, 1, "draw")
    assert game.legal_actions(1) == [{"type": "pass"}]
    assert game.default_action(1) == {"type": "pass"}
    assert act(game, 1, "pass") == [{"type": "passed", "seat": 1}]
    assert game.to_act() == [0] and game.summary()["phase"] == "play"


def test_pass_without_having_drawn_is_the_wrong_phase() -> None:
    refused(dealt([["D9"], ["C9"]]), 1, {"type": "pass"}, ErrorCode.WRONG_PHASE)


def test_an_empty_stock_is_refilled_from_the_pile_under_its_top_card() -> None:
    game = dealt([["D9", "DA"], ["C9", "C10", "HK"]], stock=[], seed=4)
    act(game, 1, "play", card="C9")
    act(game, 0, "draw")  # the stock was empty: the CK under the C9 is the new stock
    summary = game.summary()
    assert summary["pile"] == ["C9"] and summary["stock"] == []
    assert summary["hands"][0] == ["CK", "D9", "DA"] and summary["drawn"] == "CK"


def reshuffled_order(seed: int) -> tuple[list[dict[str, Any]], list[str]]:
    """Seat 1 plays four 8s (skipping seat 0 each time) and a D9; seat 0 then draws from
    the empty stock: the reshuffle's event and the new stock's order, the drawn card first."""
    game = dealt([["SA", "HA"], ["C8", "S8", "H8", "D8", "D9", "CK"]], up="C7", seed=seed)
    for card in ("C8", "S8", "H8", "D8", "D9"):
        act(game, 1, "play", card=card)
    events = act(game, 0, "draw")
    summary = game.summary()
    assert summary["pile"] == ["D9"]
    return events, [summary["drawn"], *summary["stock"]]


def test_the_reshuffle_is_public_and_its_order_comes_from_the_seed() -> None:
    events, order = reshuffled_order(5)
    assert events == [{"type": "reshuffled", "count": 5}, {"type": "drew", "seat": 0, "count": 1}]
    expected = ["C7", "C8", "S8", "H8", "D8"]
    derived_rng(5, "reshuffle", 0).shuffle(expected)
    assert order == expected and reshuffled_order(5)[1] == order
    assert len({tuple(reshuffled_order(seed)[1]) for seed in range(6)}) > 1


def test_nothing_to_draw_ends_the_turn_at_once() -> None:
    game = dealt([["D9"], ["H9", "S9"]], stock=[])
    assert act(game, 1, "draw") == [{"type": "drew", "seat": 1, "count": 0}]
    assert game.to_act() == [0] and game.summary()["phase"] == "play"


# --------------------------------------------------------------------- special cards


def test_a_seven_makes_the_next_seat_draw_two_and_skips_it() -> None:
    game = dealt([["D9"], ["C7", "H9"], ["SA"]], stock=["DA", "HQ", "S8"])
    assert act(game, 1, "play", card="C7") == [
        {"type": "played", "seat": 1, "card": "C7"},
        {"type": "penalty", "seat": 2, "count": 2},
        {"type": "skipped", "seat": 2}]
    assert game.summary()["hands"][2] == ["SA", "HQ", "DA"] and game.to_act() == [0]


def test_a_seven_reshuffles_when_the_stock_runs_out_and_skips_when_only_one_card_is_left() -> None:
    game = dealt([["D9"], ["C7", "S7", "H9"]], stock=["DA"])
    assert act(game, 1, "play", card="C7") == [
        {"type": "played", "seat": 1, "card": "C7"},
        {"type": "reshuffled", "count": 1},
        {"type": "penalty", "seat": 0, "count": 2},
        {"type": "skipped", "seat": 0}]
    assert game.summary()["hands"][0] == ["CK", "D9", "DA"] and game.to_act() == [1]
    assert act(game, 1, "play", card="S7") == [  # only the C7 under it is left to draw
        {"type": "played", "seat": 1, "card": "S7"},
        {"type": "reshuffled", "count": 1},
        {"type": "penalty", "seat": 0, "count": 1},
        {"type": "skipped", "seat": 0}]
    summary = game.summary()
    assert summary["hands"][0] == ["C7", "CK", "D9", "DA"] and game.to_act() == [1]
    assert summary["stock"] == [] and summary["pile"] == ["S7"]


def test_an_eight_skips_the_next_seat() -> None:
    game = dealt([["D9"], ["C8", "H9"], ["SA"]])
    assert act(game, 1, "play", card="C8")[1:] == [{"type": "skipped", "seat": 2}]
    assert game.to_act() == [0]


def test_a_jack_wishes_a_suit_that_holds_until_the_next_card_is_played() -> None:
    game = dealt([["D9", "S9"], ["HJ", "C9"], ["SA", "DJ", "H8"]], stock=["DK"])
    assert act(game, 1, "play", card="HJ", wish="S") == [
        {"type": "played", "seat": 1, "card": "HJ"}, {"type": "wished", "seat": 1, "suit": "S"}]
    refused(game, 2, {"type": "play", "card": "H8"}, ErrorCode.NO_MATCH)  # same suit as the J
    refused(game, 2, {"type": "play", "card": "DJ", "wish": "D"}, ErrorCode.NO_MATCH)  # J on J
    act(game, 2, "draw")
    act(game, 2, "pass")
    assert game.summary()["wish"] == "S"
    refused(game, 0, {"type": "play", "card": "D9"}, ErrorCode.NO_MATCH)
    act(game, 0, "play", card="S9")
    assert game.summary()["wish"] is None


def test_a_jack_may_wish_its_own_suit() -> None:
    game = dealt([["D9"], ["HJ", "C9"]])
    act(game, 1, "play", card="HJ", wish="H")
    assert game.summary()["wish"] == "H"


# --------------------------------------------------------------------- the end


def test_the_last_card_wins_at_once_and_scores_minus_the_cards_left() -> None:
    game = dealt([["D9", "SA"], ["C7"], ["H9", "H10", "HK"]], stock=["DA", "DK"])
    assert act(game, 1, "play", card="C7") == [
        {"type": "played", "seat": 1, "card": "C7"},
        {"type": "game_over", "winners": [1], "scores": [-2, 0, -3]}]  # the 7 has no effect
    assert game.over and game.winners() == [1] and game.to_act() == []
    assert game.legal_actions(1) == [] and game.summary()["stock"] == ["DA", "DK"]
    assert game.view(None)["scores"] == [-2, 0, -3]
    refused(game, 0, {"type": "draw"}, ErrorCode.GAME_OVER)
    refused(game, 0, {"type": "draw", "card": "D9"}, ErrorCode.INVALID_ACTION)


# --------------------------------------------------------------------- refusals


@pytest.mark.parametrize("action", [
    {"type": "shuffle"}, {"type": "play"}, {"type": "play", "card": "C1"},
    {"type": "play", "card": "c9"}, {"type": "play", "card": 9}, {"type": "play", "card": "HJ"},
    {"type": "play", "card": "HJ", "wish": "X"}, {"type": "play", "card": "HJ", "wish": None},
    {"type": "play", "card": "C9", "wish": "C"}, {"type": "draw", "card": "C9"},
    {"type": "pass", "seat": 1},
])
def test_malformed_actions_are_invalid_before_anything_else(action: dict[str, Any]) -> None:
    game = dealt([["D9"], ["C9", "HJ"]])
    refused(game, 0, action, ErrorCode.INVALID_ACTION)  # not on turn either: shape comes first


@pytest.mark.parametrize("seat", [-1, 2, "1", True, None])
def test_seats_outside_the_table_are_invalid(seat: Any) -> None:
    refused(dealt([["D9"], ["C9"]]), seat, {"type": "draw"}, ErrorCode.INVALID_ACTION)


def test_refusals_follow_the_shared_precedence() -> None:
    game = dealt([["D9", "C10"], ["C9", "SQ"]])
    refused(game, 0, {"type": "pass"}, ErrorCode.WRONG_PHASE)  # wrong phase before not on turn
    refused(game, 0, {"type": "play", "card": "C10"}, ErrorCode.NOT_YOUR_TURN)
    refused(game, 1, {"type": "play", "card": "D9"}, ErrorCode.CARD_NOT_IN_HAND)
    refused(game, 1, {"type": "play", "card": "SQ"}, ErrorCode.NO_MATCH)


# --------------------------------------------------------------------- views


def test_a_view_shows_the_own_hand_and_drawn_card_and_only_sizes_of_the_others() -> None:
    game = dealt([["D9", "DA"], ["C9"], ["SA"]], stock=["H7", "H8"])
    act(game, 1, "draw")
    mine, theirs, spectator = game.view(1), game.view(0), game.view(None)
    assert mine["hand"] == ["C9", "H7"] and mine["drawn"] == "H7"
    assert theirs["hand"] == ["D9", "DA"] and theirs["drawn"] is None and theirs["legal"] == []
    assert spectator["hand"] is None and spectator["drawn"] is None
    assert mine["hand_sizes"] == [2, 2, 1] and mine["stock_size"] == 1 and mine["pile_size"] == 1
    assert "H7" not in str(theirs) and "H8" not in str(mine)

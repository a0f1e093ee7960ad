"""Wie Waldi: one test per rule and per ruling of shared/games/waldi/RULES.md."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest

from shared.games.errors import ErrorCode, RuleError, SetupError
from shared.games.waldi import deal
from shared.games.waldi.cards import (
    COMPOSITION,
    CardDataError,
    card_sets,
    left_colour,
    parse_card_sets,
    right_colour,
)
from shared.games.waldi.engine import WieWaldi
from shared.games.waldi.scoring import place_points, round_points, winners

SETS = card_sets().sets
COLOURS = ["r", "g", "b", "y"]


def stacked(seat: int, *tops: list[str]) -> list[list[str]]:
    """The seat's three piles with these cards on top, the rest of its set below."""
    rest = list(SETS[seat])
    for top in tops:
        for card in top:
            rest.remove(card)
    piles = []
    for index in range(3):
        pile = list(tops[index]) if index < len(tops) else []
        while len(pile) < 10:
            pile.append(rest.pop())
        piles.append(pile)
    return piles


def game(*seat_piles: list[list[str]], **options: Any) -> WieWaldi:
    """A game whose first round is dealt as given."""
    setup = {"rounds": [{"piles": list(seat_piles)}]}
    return WieWaldi.new(len(seat_piles), options, seed=1, setup=setup)


def play(g: WieWaldi, seat: int, **action: Any) -> list[dict[str, Any]]:
    return g.apply(seat, action)


def refused(g: WieWaldi, seat: int, **action: Any) -> ErrorCode:
    before = g.to_dict()
    with pytest.raises(RuleError) as info:
        g.apply(seat, action)
    assert g.to_dict() == before, "a refused action changed the state"
    return info.value.code


def lay(g: WieWaldi, seat: int, pile: int = 0) -> list[dict[str, Any]]:
    """Draw a head and place it."""
    play(g, seat, type="draw", pile=pile)
    return play(g, seat, type="place_head")


def add(g: WieWaldi, seat: int, dog: str, pile: int = 0) -> list[dict[str, Any]]:
    """Draw a card and attach it."""
    play(g, seat, type="draw", pile=pile)
    return play(g, seat, type="attach", dog=dog)


# -- material -----------------------------------------------------------------------


@pytest.mark.parametrize("seat", range(4))
def test_sets_follow_the_colour_ruling(seat: int) -> None:
    def c(i: int) -> str:
        return COLOURS[(i + seat) % 4]

    heads = ["H" + c(i) for i in (0, 1, 2, 3, 0, 1, 2)]
    middles = ["M" + a + b for a in COLOURS for b in COLOURS]
    tails = ["T" + x for x in COLOURS]
    cats = ["C" + c(i) for i in (1, 2, 3)]
    assert Counter(SETS[seat]) == Counter(heads + middles + tails + cats)


def test_every_set_has_the_rulebook_composition() -> None:
    for cards in SETS:
        assert Counter(card[0] for card in cards) == Counter(COMPOSITION)


def test_card_data_is_replaceable_by_other_colours() -> None:
    other = {"colours": ["o", "p", "q", "w"],
             "sets": [[c.translate(str.maketrans("rgby", "opqw")) for c in s] for s in SETS]}
    sets = parse_card_sets(other)
    assert sets.is_card("Mow") and not sets.is_card("Mrg")


def test_engine_deals_whatever_the_data_says(monkeypatch: pytest.MonkeyPatch) -> None:
    swap = str.maketrans("rgby", "opqw")
    other = parse_card_sets({"colours": ["o", "p", "q", "w"],
                             "sets": [[c.translate(swap) for c in s] for s in SETS]})
    monkeypatch.setattr(deal, "card_sets", lambda: other)
    g = WieWaldi.new(2, seed=3)
    dealt = [card for pile in g.to_dict()["piles"][0] for card in pile]
    assert Counter(dealt) == Counter(other.sets[0])


@pytest.mark.parametrize("raw", [
    [],
    {"colours": ["r", "r", "b", "y"], "sets": [list(SETS[0])]},
    {"colours": ["red"], "sets": [list(SETS[0])]},
    {"colours": COLOURS, "sets": []},
    {"colours": COLOURS, "sets": [list(SETS[0])[:-1]]},
    {"colours": COLOURS, "sets": [[*list(SETS[0])[:-1], "Hr"]]},
    {"colours": COLOURS, "sets": [[*list(SETS[0])[:-1], "Xr"]]},
])
def test_bad_card_data_is_refused(raw: Any) -> None:
    with pytest.raises(CardDataError):
        parse_card_sets(raw)


def test_notation_colours() -> None:
    assert (left_colour("Hr"), right_colour("Hr")) == (None, "r")
    assert (left_colour("Mgb"), right_colour("Mgb")) == ("g", "b")
    assert (left_colour("Ty"), right_colour("Ty")) == ("y", None)
    assert (left_colour("Cb"), right_colour("Cb")) == ("b", None)


# -- setup --------------------------------------------------------------------------


@pytest.mark.parametrize("seats", [1, 5, "2", None])
def test_two_to_four_seats(seats: Any) -> None:
    with pytest.raises(SetupError):
        WieWaldi.new(seats)


@pytest.mark.parametrize("options", [{"colour": 1}, {"round_seconds": 0},
                                     {"round_seconds": -5}, {"round_seconds": "60"},
                                     {"round_seconds": True}, {"round_seconds": 3601}])
def test_bad_options_are_refused(options: dict[str, Any]) -> None:
    with pytest.raises(SetupError):
        WieWaldi.new(2, options)


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_each_round_deals_three_piles_of_ten_of_the_seats_set(seats: int) -> None:
    g = WieWaldi.new(seats, seed=7)
    for rnd in (1, 2, 3):
        piles = deal.deal_round(7, rnd, seats, [])
        for seat in range(seats):
            assert [len(p) for p in piles[seat]] == [10, 10, 10]
            assert Counter(c for p in piles[seat] for c in p) == Counter(SETS[seat])
    assert g.to_dict()["piles"] == deal.deal_round(7, 1, seats, [])
    assert deal.deal_round(7, 1, seats, []) != deal.deal_round(7, 2, seats, [])
    assert deal.deal_round(7, 1, seats, []) != deal.deal_round(8, 1, seats, [])


def test_rounds_the_setup_does_not_list_come_from_the_seed() -> None:
    fixed = [stacked(0, ["Hr"]), stacked(1)]
    g = WieWaldi.new(2, seed=5, setup={"rounds": [{"piles": fixed}]})
    assert g.to_dict()["piles"] == fixed
    timed = WieWaldi.new(2, {"round_seconds": 60}, 5, {"rounds": [{"piles": fixed}]})
    timed.time_up()
    assert timed.to_dict()["piles"] == deal.deal_round(5, 2, 2, [])


@pytest.mark.parametrize("setup", [
    {"rounds": [{"piles": [stacked(1), stacked(0)]}]},              # swapped sets
    {"rounds": [{"piles": [stacked(0)]}]},                          # one seat missing
    {"rounds": [{"piles": [[*stacked(0)[:2], stacked(0)[2][:9]], stacked(1)]}]},
    {"rounds": [{"piles": [stacked(0), stacked(1)]}] * 4},          # four rounds
    {"rounds": [{"piles": [stacked(0), stacked(1)], "extra": 1}]},
    {"deal": []},
    {"rounds": [{"piles": [[["Hr"] * 10] * 3, stacked(1)]}]},
])
def test_bad_setups_are_refused(setup: dict[str, Any]) -> None:
    with pytest.raises(SetupError):
        WieWaldi.new(2, setup=setup)


# -- drawing, returning, holding ----------------------------------------------------


def test_draw_takes_the_top_card_and_tells_nobody_which() -> None:
    g = game(stacked(0, ["Mry"]), stacked(1))
    events = play(g, 0, type="draw", pile=0)
    assert events == [{"type": "draw", "seat": 0, "pile": 0}]
    assert g.view(0)["hand"] == ["Mry"] and g.view(0)["hand_pile"] == 0
    assert g.view(1)["hand"] == [] and g.view(1)["holding"] == [True, False]
    assert g.summary()["pile_sizes"][0] == [9, 10, 10]


def test_return_goes_under_the_pile_it_came_from() -> None:
    g = game(stacked(0, ["Mry", "Mgg"]), stacked(1))
    play(g, 0, type="draw", pile=0)
    assert play(g, 0, type="return") == [{"type": "return", "seat": 0, "pile": 0}]
    assert g.to_dict()["piles"][0][0][-1] == "Mry"
    play(g, 0, type="draw", pile=0)
    assert g.view(0)["hand"] == ["Mgg"]


def test_a_seat_holds_one_card_at_most() -> None:
    g = game(stacked(0), stacked(1))
    play(g, 0, type="draw", pile=0)
    assert refused(g, 0, type="draw", pile=1) is ErrorCode.NOT_ALLOWED


def test_drawing_from_an_empty_pile_is_refused() -> None:
    g = game(stacked(0, ["Hr", "Hg", "Hb", "Hy", "Hr", "Hg", "Hb", "Mrr", "Mgg", "Mbb"]),
             stacked(1))
    for _ in range(7):
        lay(g, 0)
    for dog in ("d1", "d2", "d3"):
        add(g, 0, dog)
    assert g.summary()["pile_sizes"][0] == [0, 10, 10]
    assert {"type": "draw", "pile": 0} not in g.legal_actions(0)
    assert refused(g, 0, type="draw", pile=0) is ErrorCode.NOT_ALLOWED


@pytest.mark.parametrize("kind", ["return", "place_head"])
def test_an_empty_hand_cannot_return_or_place(kind: str) -> None:
    g = game(stacked(0), stacked(1))
    assert refused(g, 0, type=kind) is ErrorCode.NOT_ALLOWED


# -- heads and attaching --------------------------------------------------------------


def test_heads_start_dogs_numbered_in_order() -> None:
    g = game(stacked(0, ["Hr"]), stacked(1, ["Hy"]))
    assert lay(g, 1)[-1] == {"type": "place_head", "seat": 1, "card": "Hy", "dog": "d1"}
    lay(g, 0)
    assert [(d["id"], d["cards"], d["by"]) for d in g.summary()["dogs"]] == [
        ("d1", ["Hy"], [1]), ("d2", ["Hr"], [0])]


def test_only_heads_are_placed_and_heads_never_attach() -> None:
    g = game(stacked(0, ["Hr", "Mrg", "Hr"]), stacked(1))
    lay(g, 0)
    play(g, 0, type="draw", pile=0)
    assert refused(g, 0, type="place_head") is ErrorCode.NOT_ALLOWED
    play(g, 0, type="attach", dog="d1")
    play(g, 0, type="draw", pile=0)
    assert refused(g, 0, type="attach", dog="d1") is ErrorCode.NOT_ALLOWED


def test_cards_attach_when_the_colours_coincide() -> None:
    g = game(stacked(0, ["Hr", "Mbb", "Mrg", "Mgb"]), stacked(1))
    lay(g, 0)
    play(g, 0, type="draw", pile=0)
    assert refused(g, 0, type="attach", dog="d1") is ErrorCode.NO_MATCH
    play(g, 0, type="return")
    events = add(g, 0, "d1")
    assert events == [{"type": "attach", "seat": 0, "card": "Mrg", "dog": "d1", "length": 2}]
    add(g, 0, "d1")
    assert g.summary()["dogs"][0]["cards"] == ["Hr", "Mrg", "Mgb"]


def test_every_seat_attaches_to_every_dog() -> None:
    g = game(stacked(0, ["Hb"]), stacked(1, ["Mbr"]))
    lay(g, 0)
    add(g, 1, "d1")
    assert g.summary()["dogs"][0]["by"] == [0, 1]


def test_unknown_dogs_are_refused() -> None:
    g = game(stacked(0, ["Mrg"]), stacked(1))
    play(g, 0, type="draw", pile=0)
    assert refused(g, 0, type="attach", dog="d1") is ErrorCode.CARD_NOT_IN_HAND
    assert refused(g, 0, type="attach", dog="x") is ErrorCode.CARD_NOT_IN_HAND


def test_a_tail_completes_the_dog_and_its_layer_puts_a_token() -> None:
    g = game(stacked(0, ["Hr"]), stacked(1, ["Tr", "Mrr"]))
    lay(g, 0)
    events = add(g, 1, "d1")
    assert events[-1] == {"type": "dog_complete", "dog": "d1", "owner": 0, "token_by": 1,
                          "tokens_left": 5}
    assert g.summary()["tokens_left"] == [6, 5]
    play(g, 1, type="draw", pile=0)
    assert refused(g, 1, type="attach", dog="d1") is ErrorCode.CARD_NOT_IN_HAND
    assert {"type": "attach", "dog": "d1"} not in g.legal_actions(1)


def test_a_plain_tail_gives_the_dog_to_the_head_layer() -> None:
    g = game(stacked(0, ["Hb", "Mbg"]), stacked(1, ["Tg"]))
    lay(g, 0)
    add(g, 0, "d1")
    add(g, 1, "d1")
    assert g.summary()["dogs"][0]["owner"] == 0


def test_a_cat_tail_gives_the_dog_to_the_tail_layer() -> None:
    g = game(stacked(0, ["Hb", "Mbg"]), stacked(1, ["Mgy", "Cy"]))
    lay(g, 0)
    add(g, 0, "d1")
    add(g, 1, "d1")
    add(g, 1, "d1")
    dog = g.summary()["dogs"][0]
    assert (dog["complete"], dog["owner"], dog["by"]) == (True, 1, [0, 0, 1, 1])


# -- races ------------------------------------------------------------------------------


def test_a_lost_race_is_stale_and_the_card_stays_held() -> None:
    g = game(stacked(0, ["Hr", "Mrg"]), stacked(1, ["Mrb"]))
    lay(g, 0)
    play(g, 0, type="draw", pile=0)
    play(g, 1, type="draw", pile=0)
    seen = len(g.view(0)["dogs"][0]["cards"])
    play(g, 1, type="attach", dog="d1", at=seen)
    assert refused(g, 0, type="attach", dog="d1", at=seen) is ErrorCode.STALE
    assert g.view(0)["hand"] == ["Mrg"]


def test_without_at_the_card_goes_on_the_end_there_now() -> None:
    g = game(stacked(0, ["Hr", "Mbr"]), stacked(1, ["Mrb"]))
    lay(g, 0)
    play(g, 0, type="draw", pile=0)
    add(g, 1, "d1")
    play(g, 0, type="attach", dog="d1")
    assert g.summary()["dogs"][0]["cards"] == ["Hr", "Mrb", "Mbr"]


@pytest.mark.parametrize(("action", "code"), [
    ({"type": "attach", "dog": "d9", "at": 5}, ErrorCode.CARD_NOT_IN_HAND),
    ({"type": "attach", "dog": "d1", "at": 3}, ErrorCode.STALE),
    ({"type": "attach", "dog": "d1", "at": -1}, ErrorCode.INVALID_ACTION),
    ({"type": "attach", "dog": "d1", "at": 1.0}, ErrorCode.INVALID_ACTION),
    ({"type": "attach", "dog": "d1", "at": True}, ErrorCode.INVALID_ACTION),
    ({"type": "attach"}, ErrorCode.INVALID_ACTION),
    ({"type": "return", "pile": 0}, ErrorCode.INVALID_ACTION),
    ({"type": "draw", "pile": 3}, ErrorCode.INVALID_ACTION),
    ({"type": ["draw"]}, ErrorCode.INVALID_ACTION),
    ({}, ErrorCode.INVALID_ACTION),
])
def test_refusal_precedence_with_a_mismatching_card(action: dict[str, Any],
                                                    code: ErrorCode) -> None:
    g = game(stacked(0, ["Hr", "Mgb"]), stacked(1))
    lay(g, 0)
    play(g, 0, type="draw", pile=0)
    assert refused(g, 0, **action) is code


def test_stale_and_unknown_dogs_come_before_an_empty_hand() -> None:
    g = game(stacked(0, ["Hr"]), stacked(1))
    lay(g, 0)
    assert refused(g, 1, type="attach", dog="d2") is ErrorCode.CARD_NOT_IN_HAND
    assert refused(g, 1, type="attach", dog="d1", at=0) is ErrorCode.STALE
    assert refused(g, 1, type="attach", dog="d1", at=1) is ErrorCode.NOT_ALLOWED


def test_seats_outside_the_table_are_invalid() -> None:
    g = game(stacked(0), stacked(1))
    assert refused(g, 2, type="draw", pile=0) is ErrorCode.INVALID_ACTION


# -- the end of a round -----------------------------------------------------------------

STOPPER = ["Hr", "Tr", "Hg", "Tg", "Hb", "Tb", "Hy", "Ty", "Hg", "Cg"]


def six_dogs(g: WieWaldi, seat: int = 0) -> list[dict[str, Any]]:
    """Let the seat lay and complete its six two-card dogs from STOPPER + ["Hb", "Cb"]."""
    events: list[dict[str, Any]] = []
    for index in range(6):
        pile = 0 if index < 5 else 1
        first = len(g.summary()["dogs"]) + 1
        lay(g, seat, pile)
        events = add(g, seat, f"d{first}", pile)
    return events


def test_the_sixth_token_stops_the_round_and_held_cards_are_discarded() -> None:
    g = game(stacked(0, STOPPER, ["Hb", "Cb"]), stacked(1, ["Myy"]))
    play(g, 1, type="draw", pile=0)
    events = six_dogs(g)
    kinds = [e["type"] for e in events]
    assert kinds == ["attach", "dog_complete", "stop", "round_over", "round_started"]
    over = events[3]
    assert over["end"] == "stop" and over["stopped_by"] == 0 and over["round"] == 1
    assert over["cards_won"] == [12, 0] and over["points"] == [4, 0]
    state = g.summary()
    assert state["round"] == 2 and state["held"] == [None, None] and state["dogs"] == []
    assert state["tokens_left"] == [6, 6] and state["pile_sizes"] == [[10] * 3] * 2
    assert state["completed_rounds"] == [{"cards_won": [12, 0], "points": [4, 0],
                                          "stopped_by": 0}]


def test_the_pile_bonus_counts_a_pile_whose_last_card_was_held_at_stop() -> None:
    g = game(stacked(0, STOPPER, ["Hb", "Cb"]),
             stacked(1, ["Hb", "Mbb", "Mbr", "Mrr", "Mry", "Myy", "Myg", "Mgg", "Mgb", "Mbg"]))
    lay(g, 1)
    for _ in range(8):
        add(g, 1, "d1")
    play(g, 1, type="draw", pile=0)
    assert g.summary()["pile_sizes"][1][0] == 0
    events = six_dogs(g)
    assert events[3]["cards_won"] == [12, 0] and events[3]["emptied_a_pile"] == [True, True]
    assert events[3]["points"] == [4, 1]


def dead_end_game(held_by_1: str, piles_0: list[str], piles_1: tuple[str, ...] = ("Myy",)
                  ) -> WieWaldi:
    """Round 1 near its end: d1 = [Hr] by seat 0, seat 1 holds one card, few cards left."""
    g = WieWaldi.new(2, {"round_seconds": 30}, seed=2)
    data = g.to_dict()
    data["piles"] = [[list(piles_0), [], []], [[], [], list(piles_1)]]
    data["held"], data["held_from"] = [None, held_by_1], [None, 2]
    data["dogs"] = [{"id": "d1", "cards": ["Hr"], "by": [0], "complete": False, "owner": None}]
    return WieWaldi.from_dict(data)


def test_the_round_ends_when_nobody_can_ever_play_again() -> None:
    g = dead_end_game("Tr", ["Mgb"])
    events = play(g, 1, type="attach", dog="d1")
    over = next(e for e in events if e["type"] == "round_over")
    assert over["end"] == "dead_end" and over["stopped_by"] is None
    assert over["cards_won"] == [2, 0] and over["points"] == [4, 1]
    assert g.summary()["round"] == 2


def test_a_head_anywhere_keeps_the_round_going() -> None:
    g = dead_end_game("Tr", ["Mgb", "Hy"])
    play(g, 1, type="attach", dog="d1")
    assert g.summary()["round"] == 1


def test_a_pile_card_that_fits_keeps_the_round_going() -> None:
    """A seat holding a card that fits nothing can still return it and draw one that fits."""
    g = dead_end_game("Mrg", ["Mbb", "Mgy"], ("Mgg",))
    play(g, 1, type="attach", dog="d1")
    assert g.summary()["round"] == 1
    play(g, 0, type="draw", pile=0)
    play(g, 0, type="return")
    play(g, 0, type="draw", pile=0)
    play(g, 0, type="attach", dog="d1")
    assert g.summary()["round"] == 2


def test_a_held_card_that_fits_keeps_the_round_going() -> None:
    g = dead_end_game("Mrb", [])
    data = g.to_dict()
    data["held"][0], data["held_from"][0] = "Mbg", 0
    g = WieWaldi.from_dict(data)
    play(g, 1, type="attach", dog="d1")
    assert g.summary()["round"] == 1


def test_time_up_ends_the_round_like_a_dead_end() -> None:
    g = game(stacked(0, ["Hr", "Tr", "Mgg"]), stacked(1), round_seconds=90)
    lay(g, 0)
    add(g, 0, "d1")
    play(g, 0, type="draw", pile=0)
    assert g.view(0)["round_seconds"] == 90
    assert g.time_up(2) == []
    events = g.time_up(1)
    assert [e["type"] for e in events] == ["round_over", "round_started"]
    assert events[0]["end"] == "time_up" and events[0]["points"] == [3, 0]
    assert g.summary()["round"] == 2 and g.summary()["held"] == [None, None]
    assert g.time_up(1) == []


def test_a_round_has_a_time_limit_unless_the_table_sets_none() -> None:
    assert WieWaldi.new(2).view(None)["round_seconds"] == 180
    assert WieWaldi.new(2, {"round_seconds": 3600}).view(None)["round_seconds"] == 3600
    events = game(stacked(0), stacked(1)).time_up(1)
    assert events[0]["type"] == "round_over" and events[0]["end"] == "time_up"


def test_time_up_needs_a_round_time_limit() -> None:
    g = game(stacked(0), stacked(1), round_seconds=None)
    with pytest.raises(RuleError) as info:
        g.time_up()
    assert info.value.code is ErrorCode.NOT_ALLOWED


# -- scoring and the end of the game ---------------------------------------------------


@pytest.mark.parametrize(("cards", "points"), [
    ([9, 5, 3, 1], [3, 2, 1, 0]),
    ([5, 5, 3, 1], [3, 3, 1, 0]),
    ([5, 3, 3, 1], [3, 2, 2, 0]),
    ([4, 4, 4, 4], [3, 3, 3, 3]),
    ([7, 2], [3, 2]),
    ([6, 6, 0], [3, 3, 0]),
    ([5, 0, 0, 0], [3, 0, 0, 0]),
    ([0, 0], [0, 0]),
])
def test_places_by_competition_ranking_and_no_bone_for_no_cards(cards: list[int],
                                                                 points: list[int]) -> None:
    assert place_points(cards) == points


def test_the_pile_bonus_adds_a_bronze() -> None:
    assert round_points([3, 0, 2], [True, True, False]) == [4, 1, 2]


def test_the_highest_total_wins_and_ties_share() -> None:
    assert winners([7, 9, 3]) == [1]
    assert winners([7, 7, 3]) == [0, 1]


def test_three_rounds_then_the_game_is_over() -> None:
    g = WieWaldi.new(2, {"round_seconds": 60}, seed=4)
    g.time_up()
    g.time_up()
    events = g.time_up()
    assert events[-1] == {"type": "game_over", "winners": [0, 1], "scores": [0, 0]}
    assert g.over and g.winners() == [0, 1] and g.to_act() == [] and g.legal_actions(0) == []
    assert g.summary()["phase"] == "over" and g.summary()["round"] == 3
    assert refused(g, 0, type="draw", pile=0) is ErrorCode.GAME_OVER
    assert refused(g, 0, type="draw", pile=4) is ErrorCode.INVALID_ACTION
    assert g.time_up() == []


# -- who may act, views, storage ----------------------------------------------------------


def test_legal_actions_list_plays_then_return_or_the_draws() -> None:
    g = game(stacked(0, ["Hr", "Hr", "Mrg"]), stacked(1))
    assert g.legal_actions(0) == [{"type": "draw", "pile": p} for p in range(3)]
    lay(g, 0)
    lay(g, 0)
    play(g, 0, type="draw", pile=0)
    assert g.legal_actions(0) == [{"type": "attach", "dog": "d1"},
                                  {"type": "attach", "dog": "d2"}, {"type": "return"}]
    assert g.to_act() == [0, 1]
    assert g.default_action(0) == {"type": "return"} and g.default_action(1) is None


def test_to_act_leaves_out_seats_with_nothing_to_do() -> None:
    g = dead_end_game("Mrg", ["Mgy"])
    data = g.to_dict()
    data["piles"][1] = [[], [], []]
    data["held"][1] = None
    assert WieWaldi.from_dict(data).to_act() == [0]


def test_views_show_the_own_held_card_only() -> None:
    g = game(stacked(0, ["Mry"]), stacked(1, ["Hg"]), stacked(2))
    play(g, 0, type="draw", pile=0)
    play(g, 1, type="draw", pile=0)
    text = {seat: json.dumps(g.view(seat)) for seat in (0, 1, 2, None)}
    assert "Mry" in text[0] and "Hg" not in text[0]
    assert "Hg" in text[1] and "Mry" not in text[1]
    assert "Hg" not in text[2] and "Mry" not in text[2] and "Mry" not in text[None]
    assert g.view(None)["hand"] == [] and g.view(None)["legal"] == []
    assert g.view(1)["legal"] == g.legal_actions(1) and g.view(1)["seat"] == 1
    assert g.summary()["visible"] == [[["Mry"], None, None], [None, ["Hg"], None],
                                      [None, None, []]]


def test_state_round_trips_through_json() -> None:
    g = game(stacked(0, ["Hr", "Mrg"]), stacked(1))
    lay(g, 0)
    play(g, 0, type="draw", pile=0)
    copy = WieWaldi.from_dict(json.loads(json.dumps(g.to_dict())))
    assert copy.to_dict() == g.to_dict() and copy.summary() == g.summary()
    play(copy, 0, type="attach", dog="d1")
    assert copy.to_dict() != g.to_dict()

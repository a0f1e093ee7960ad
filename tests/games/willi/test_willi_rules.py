"""Willi: one test per rule of the rulebook and per ruling of RULES.md."""

from __future__ import annotations

import random
from typing import Any

import pytest

from shared.games.errors import ErrorCode, RuleError, SetupError
from shared.games.replay import ScenarioError, run_scenario
from shared.games.willi.cards import full_deck
from shared.games.willi.deal import deal_round
from shared.games.willi.engine import Willi
from shared.games.willi.rules import (
    awards,
    call_window,
    game_winners,
    lowest_card_winner,
    playable,
    start_position,
)
from tests.support.engines import act, refused
from tests.support.willi import (
    COLOUR_DEAL,
    EXAMPLE_DEAL,
    LOW_DEAL,
    MONSTER_DEAL,
    EventScorer,
    cards_shown,
    dealt,
    discard,
    finish_randomly,
    play_cards,
    random_step,
)

# ------------------------------------------------------------------ pure rules


def test_awards_rulebook_examples() -> None:
    assert awards([51, 38, 37, 31]) == [3, 1, 0, 2]
    assert awards([40, 40, 39, 34]) == [0, 0, 0, 2]


def test_awards_do_not_depend_on_seat_order() -> None:
    assert awards([31, 51, 37, 38]) == [2, 3, 0, 1]


@pytest.mark.parametrize(("sums", "expected"), [
    ([30, 30, 30, 30], [0, 0, 0, 0]),
    ([40, 35, 35, 30], [3, 0, 0, 2]),
    ([40, 38, 30, 30], [3, 1, 0, 0]),
    ([40, 40, 30, 30], [0, 0, 0, 0]),
])
def test_shared_sums_earn_nothing_and_places_count_higher_sums(sums: list[int],
                                                                expected: list[int]) -> None:
    assert awards(sums) == expected


def test_follow_by_colour_or_number() -> None:
    hand = ["R1", "R6", "Y5", "Y9", "G1"]
    assert playable(hand, "R5") == ["R1", "R6", "Y5"]
    assert playable(hand, "B8") == hand  # nothing matches: anything goes
    assert playable(hand, None) == hand  # the leader is free


def test_lowest_card_wins_and_later_of_equals() -> None:
    trick = [(0, "R5"), (1, "Y5"), (2, "G7"), (3, "B6")]
    assert lowest_card_winner(trick, {0, 1, 2, 3}) == 1
    assert lowest_card_winner([(2, "B3"), (3, "G3"), (0, "R3"), (1, "Y9")], {0, 1, 2, 3}) == 0


def test_cards_of_full_seats_are_ignored_when_finding_the_lowest() -> None:
    trick = [(0, "R1"), (1, "Y4"), (2, "G7"), (3, "B8")]
    assert lowest_card_winner(trick, {1, 2, 3}) == 1
    assert lowest_card_winner(trick, {2, 3}) == 2


def test_call_window_order_of_the_rulebook() -> None:
    everyone = {0, 1, 2, 3}
    assert call_window([2], everyone) == [2]
    assert call_window([2, 3], everyone) == [3, 2]
    assert call_window([2, 3, 0], everyone) == [0, 2, 3]
    assert call_window([2, 3, 0, 1], everyone) == []  # never after the 4th card
    assert call_window([2, 3, 0], {2, 3}) == [2, 3]  # full seats are skipped


def test_start_player_rotates_left_each_round() -> None:
    assert [start_position(r, 4) for r in range(1, 9)] == [0, 1, 2, 3, 0, 1, 2, 3]
    assert [start_position(r, 3) for r in range(1, 9)] == [3, 0, 1, 2, 3, 0, 1, 2]


def test_winners_share_ties_and_never_include_the_monster() -> None:
    assert game_winners([5, 7, 7, 2], 4) == [1, 2]
    assert game_winners([5, 7, 3, 20], 3) == [1]


# ---------------------------------------------------------------- setup and deal


def test_seeded_deal_gives_nine_distinct_cards_to_each_position() -> None:
    game = Willi.new(4, {}, 7)
    hands = game.summary()["hands"]
    assert [len(hand) for hand in hands] == [9, 9, 9, 9]
    assert sorted(card for hand in hands for card in hand) == sorted(full_deck())
    assert Willi.new(4, {}, 7).to_dict() == game.to_dict()
    assert Willi.new(4, {}, 8).to_dict() != game.to_dict()


def test_explicit_deal_is_used_and_later_rounds_come_from_the_seed() -> None:
    game = dealt(MONSTER_DEAL, people=3, seed=5)
    hands = game.summary()["hands"]
    assert [sorted(hand) for hand in hands] == [sorted(hand) for hand in MONSTER_DEAL]
    assert hands[3] == MONSTER_DEAL[3]  # the monster's stack keeps its order
    assert deal_round(5, 2, [MONSTER_DEAL]) == deal_round(5, 2, [])


@pytest.mark.parametrize("setup", [
    {"rounds": [{"hands": [*EXAMPLE_DEAL[:3], ["R3"] * 9]}]},  # duplicates
    {"rounds": [{"hands": [hand[:8] for hand in EXAMPLE_DEAL]}]},  # 8 cards
    {"rounds": [{"hands": EXAMPLE_DEAL[:3]}]},  # three hands
    {"rounds": [{"hands": [*EXAMPLE_DEAL[:3], [*EXAMPLE_DEAL[3][:8], "b3"]]}]},  # notation
    {"rounds": [{"hands": EXAMPLE_DEAL, "turned": "R1"}]},  # extra key
    {"rounds": [{"hands": EXAMPLE_DEAL}]} | {"dealer": 1},
    {"rounds": "R1"},
    {"rounds": [{"hands": EXAMPLE_DEAL}] * 9},
])
def test_bad_setup_is_refused_as_a_whole(setup: dict) -> None:
    with pytest.raises(SetupError):
        Willi.new(4, {}, 0, setup)
    with pytest.raises(ScenarioError):
        run_scenario({"game": "willi", "seats": 4, "setup": setup, "actions": []})


@pytest.mark.parametrize(("seats", "options", "seed"), [
    (2, {}, 0), (5, {}, 0), ("4", {}, 0), (4, {"monster": True}, 0), (4, {}, "1"), (4, {}, True),
])
def test_bad_seats_options_or_seed_are_refused(seats: Any, options: dict, seed: Any) -> None:
    with pytest.raises(SetupError):
        Willi.new(seats, options, seed)


# --------------------------------------------------------------------- discard


def test_every_person_discards_once_in_any_order() -> None:
    game = dealt(EXAMPLE_DEAL)
    assert game.state.phase == "discard" and game.to_act() == [0, 1, 2, 3]
    act(game, 2, "discard", card="G9")
    assert game.to_act() == [0, 1, 3]
    refused(game, 2, {"type": "discard", "card": "B5"}, ErrorCode.NOT_YOUR_TURN)
    refused(game, 0, {"type": "play", "card": "R5"}, ErrorCode.WRONG_PHASE)
    refused(game, 1, {"type": "discard", "card": "R5"}, ErrorCode.CARD_NOT_IN_HAND)
    for seat, card in [(3, "Y8"), (0, "B9"), (1, "Y9")]:
        act(game, seat, "discard", card=card)
    assert game.state.phase == "play" and game.to_act() == [0]
    assert [len(hand) for hand in game.summary()["hands"]] == [8, 8, 8, 8]


def test_discards_stay_secret() -> None:
    game = dealt(EXAMPLE_DEAL)
    events = discard(game, "B9", "Y9", "G9", "Y8")
    assert all("card" not in event for event in events if event["type"] == "discarded")
    for viewer in [None, 0, 1, 2, 3]:
        assert not cards_shown(game.view(viewer)) & {"B9", "Y9", "G9", "Y8"}


def test_the_monster_does_not_discard_and_leads_round_one() -> None:
    game = dealt(MONSTER_DEAL, people=3)
    assert game.to_act() == [0, 1, 2]
    events = discard(game, "B9", "Y9", "G9")
    assert {"type": "played", "seat": 3, "card": "Y3"} in events
    summary = game.summary()
    assert summary["trick"] == [[3, "Y3"]] and summary["to_act"] == [0]
    assert len(summary["hands"][3]) == 8


# ------------------------------------------------------------------ start player


@pytest.mark.parametrize("people", [3, 4])
def test_each_round_starts_left_of_the_previous_start_player(people: int) -> None:
    game = Willi.new(people, {}, 11)
    rng = random.Random(11)
    leaders, first_cards = [], []
    while not game.over:
        events = random_step(game, rng)[2]
        for event, after in zip(events, [*events[1:], None], strict=True):
            if event["type"] == "play_started":
                leaders.append(event["leader"])
                first_cards.append(after["seat"] if after else game.to_act()[0])
    expected = [start_position(r, people) for r in range(1, 9)]
    assert leaders == expected and first_cards == expected


# --------------------------------------------------------------------- following


def test_must_follow_colour_or_number() -> None:
    game = dealt(EXAMPLE_DEAL)
    discard(game, "B9", "Y9", "G9", "Y8")
    assert len(game.legal_actions(0)) == 8  # the leader plays any card
    play_cards(game, "R5")
    assert game.legal_actions(1) == [{"type": "play", "card": c} for c in ["R1", "R6", "Y5"]]
    refused(game, 1, {"type": "play", "card": "G1"}, ErrorCode.MUST_FOLLOW)
    act(game, 1, "play", card="Y5")  # the number follows too


def test_without_a_matching_card_any_card_may_be_played() -> None:
    game = dealt(COLOUR_DEAL)
    discard(game, "R9", "Y9", "G8", "B9")
    play_cards(game, "R5")
    assert len(game.legal_actions(1)) == 8  # seat 1 has no red and no 5


# ------------------------------------------------------------------ trick winner


def test_the_lowest_card_takes_the_trick_whatever_its_colour() -> None:
    game = dealt(COLOUR_DEAL)
    discard(game, "R9", "Y9", "G8", "B9")
    play_cards(game, "R5", "Y2", "G5", "B5")
    assert game.summary()["trick_winners"] == [1]


def test_of_equal_lowest_cards_the_later_one_wins() -> None:
    game = dealt(COLOUR_DEAL)
    discard(game, "R9", "Y9", "G8", "B9")
    play_cards(game, "R5", "Y6", "G5", "B5")
    assert game.summary()["trick_winners"] == [3]


# ----------------------------------------------------------------- Meinz windows


def test_windows_ask_the_last_player_first_then_the_earlier_ones() -> None:
    game = dealt(COLOUR_DEAL)
    discard(game, "R9", "Y9", "G8", "B9")
    windows = play_cards(game, "R5", "Y6", "G5", "B5")
    assert windows == [[0], [1, 0], [2, 0, 1]]  # and none after the 4th card


def test_meinz_takes_the_trick_and_closes_all_windows() -> None:
    game = dealt(COLOUR_DEAL)
    discard(game, "R9", "Y9", "G8", "B9")
    windows = play_cards(game, "R5", "Y6", "G5", "B5", meinz=(2, 1))
    assert windows == [[0], [1]]
    assert game.summary()["trick_winners"] == [1]  # though B5 was lower


def test_answers_come_one_seat_at_a_time_and_only_in_a_window() -> None:
    game = dealt(COLOUR_DEAL)
    discard(game, "R9", "Y9", "G8", "B9")
    play_cards(game, "R5")
    refused(game, 0, {"type": "meinz"}, ErrorCode.WRONG_PHASE)  # window closed
    act(game, 1, "play", card="Y6")
    assert game.summary()["phase"] == "call" and game.to_act() == [1]
    refused(game, 0, {"type": "meinz"}, ErrorCode.NOT_YOUR_TURN)  # asked second
    refused(game, 2, {"type": "play", "card": "G5"}, ErrorCode.WRONG_PHASE)


def test_seats_with_two_tricks_are_never_asked_and_their_cards_are_ignored() -> None:
    game = dealt(LOW_DEAL)
    discard(game, "G3", "G6", "G9", "B9")
    assert play_cards(game, "R1", "R4", "R7", "B1", meinz=(1, 0)) == [[0]]
    assert play_cards(game, "Y2", "Y4", "Y7", "B2", meinz=(1, 0)) == [[0]]
    assert game.summary()["tricks_taken"] == [2, 0, 0, 0]
    # Seat 0 leads the lowest card but is full: no window for it, its G1 does not count.
    assert play_cards(game, "G1", "G4", "G7", "B8") == [[1], [2, 1]]
    assert game.summary()["trick_winners"] == [0, 0, 1]


# ---------------------------------------------------------------------- exchange


def _example_first_trick() -> Willi:
    game = dealt(EXAMPLE_DEAL)
    discard(game, "B9", "Y9", "G9", "Y8")
    for card in ["R5", "Y5", "R2"]:
        act(game, game.to_act()[0], "play", card=card)
        while game.state.phase == "call":
            act(game, game.to_act()[0], "pass")
    act(game, 3, "play", card="R3")
    return game


def test_the_winner_may_swap_a_hand_card_for_a_same_coloured_trick_card() -> None:
    game = _example_first_trick()
    assert game.state.phase == "exchange" and game.to_act() == [2]
    swaps = {(a["give"], a["take"]) for a in game.legal_actions(2) if a["type"] == "exchange"}
    assert swaps == {("R7", "R5"), ("R7", "R2"), ("R7", "R3"), ("Y1", "Y5"), ("Y4", "Y5")}
    assert {"type": "pass"} in game.legal_actions(2)
    refused(game, 2, {"type": "exchange", "give": "Y1", "take": "R5"}, ErrorCode.NOT_ALLOWED)
    events = act(game, 2, "exchange", give="R7", take="R2")  # its own card
    assert {"type": "exchanged", "seat": 2, "give": "R7", "take": "R2"} in events
    assert "R2" in game.summary()["hands"][2] and "R7" not in game.summary()["hands"][2]
    assert game.view(0)["tricks"][0]["exchange"] == {"give": "R7", "take": "R2"}
    assert game.state.finished[0].points() == 5 + 5 + 7 + 3
    assert game.state.phase == "play" and game.to_act() == [2]


def test_exchange_names_cards_that_must_be_in_hand_and_on_the_trick() -> None:
    game = _example_first_trick()
    refused(game, 2, {"type": "exchange", "give": "R9", "take": "R5"}, ErrorCode.CARD_NOT_IN_HAND)
    refused(game, 2, {"type": "exchange", "give": "R7", "take": "R8"}, ErrorCode.CARD_NOT_IN_HAND)
    refused(game, 0, {"type": "pass"}, ErrorCode.NOT_YOUR_TURN)
    refused(game, 2, {"type": "play", "card": "B2"}, ErrorCode.WRONG_PHASE)
    act(game, 2, "pass")
    assert game.state.phase == "play" and game.summary()["trick"] == []


def test_no_exchange_is_offered_without_a_same_coloured_pair() -> None:
    game = dealt(COLOUR_DEAL)
    discard(game, "R1", "Y9", "G8", "B9")
    act(game, 0, "play", card="R5")
    act(game, 0, "pass")
    act(game, 1, "play", card="G9")  # seat 1 has no red and no 5
    act(game, 1, "meinz")
    act(game, 2, "play", card="G5")
    act(game, 3, "play", card="B5")  # seat 1 holds only yellows now
    assert game.state.phase == "play" and game.to_act() == [1]


@pytest.mark.parametrize("people", [3, 4])
def test_exchange_only_for_people_with_cards_and_never_after_the_last_trick(people: int) -> None:
    game = Willi.new(people, {}, 3)
    rng = random.Random(3)
    offered = 0
    while not game.over:
        if game.state.phase == "exchange":
            offered += 1
            winner = game.to_act()[0]
            assert winner < people and game.state.hands[winner]
            assert len(game.state.finished) < 8
        random_step(game, rng)
    assert offered > 0


# ---------------------------------------------------------------- the monster


def test_the_monster_is_never_asked_and_wins_when_lowest() -> None:
    game = dealt(MONSTER_DEAL, people=3)
    discard(game, "B9", "Y9", "G9")
    assert play_cards(game, "Y7", "Y5", "Y4") == [[0], [1, 0]]
    assert game.summary()["trick_winners"] == [3]
    assert game.summary()["trick"] == [[3, "R3"]]  # it leads the next trick by itself


def test_the_monster_plays_its_top_card_without_following() -> None:
    game = dealt(MONSTER_DEAL, people=3)
    discard(game, "B9", "Y9", "G9")
    play_cards(game, "Y7", "Y5", "Y4")
    play_cards(game, "G3", "R6", "R7")
    assert game.summary()["trick_winners"] == [3, 0]
    play_cards(game, "B6", "B7", "B5")  # the monster turns up R4, though it holds B3
    summary = game.summary()
    assert summary["trick_winners"] == [3, 0, 3]
    assert summary["trick"] == [[3, "R8"]]


def _greedy_caller_game(seed: int) -> tuple[Willi, list[dict]]:
    """3 people who call Meinz whenever asked; one round."""
    game = Willi.new(3, {}, seed)
    events: list[dict] = []
    while game.state.round == 1:
        seat = game.to_act()[0]
        legal = game.legal_actions(seat)
        action = {"type": "meinz"} if {"type": "meinz"} in legal else legal[0]
        if action["type"] == "exchange":
            action = {"type": "pass"}
        events += game.apply(seat, action)
    return game, events


def test_the_monster_takes_the_last_two_tricks_when_people_took_six() -> None:
    seen = 0
    for seed in range(20):
        game, _ = _greedy_caller_game(seed)
        winners = game.summary()["completed_rounds"][0]["trick_winners"]
        if 3 not in winners[:6]:
            seen += 1
            assert winners[6:] == [3, 3]
    assert seen > 0


def test_the_monster_adds_twelve_to_its_sum() -> None:
    game, events = _greedy_caller_game(1)
    table: list[str] = []
    monster_cards: list[str] = []
    for event in events:
        if event["type"] == "played":
            table.append(event["card"])
        elif event["type"] == "trick_won":
            monster_cards += table if event["seat"] == 3 else []
            table = []
    assert len(monster_cards) == 8  # two tricks; the monster never swaps
    monster_sum = game.summary()["completed_rounds"][0]["sums"][3]
    assert monster_sum == sum(int(card[1]) for card in monster_cards) + 12


def test_the_monster_never_wins_even_with_the_most_points() -> None:
    game = Willi.new(3, {}, 4)
    rng = random.Random(4)
    while game.state.round < 8:
        random_step(game, rng)
    game.state.scores = [0, 1, 2, 40]
    finish_randomly(game, rng)
    scores = game.summary()["scores"]
    assert scores[3] > max(scores[:3])
    assert game.winners() == [s for s in range(3) if scores[s] == max(scores[:3])]


# ------------------------------------------------------------ rounds and game end


@pytest.mark.parametrize("people", [3, 4])
def test_eight_rounds_are_scored_and_the_most_points_win(people: int) -> None:
    game = Willi.new(people, {}, 21)
    scorer = EventScorer(people)
    events = finish_randomly(game, random.Random(21))
    scorer.feed(events)  # sums, awards, totals and winners from the events alone
    summary = game.summary()
    assert scorer.rounds == 8 and len(summary["completed_rounds"]) == 8
    assert summary["round"] == 8 and summary["phase"] == "over" and summary["over"]
    assert summary["to_act"] == [] and summary["winners"] == game.winners()
    assert events[-1]["type"] == "game_over"
    for done in summary["completed_rounds"]:
        assert done["awards"] == awards(done["sums"])
        assert sorted(done["trick_winners"]) == [0, 0, 1, 1, 2, 2, 3, 3]


def test_after_the_game_every_action_is_game_over() -> None:
    game = Willi.new(4, {}, 2)
    finish_randomly(game, random.Random(2))
    assert all(game.legal_actions(seat) == [] for seat in range(4))
    assert game.default_action(0) is None
    refused(game, 0, {"type": "play", "card": "R5"}, ErrorCode.GAME_OVER)
    refused(game, 1, {"type": "pass"}, ErrorCode.GAME_OVER)
    refused(game, 1, {"type": "dance"}, ErrorCode.INVALID_ACTION)  # malformed comes first


# ------------------------------------------------------------- refusal precedence


@pytest.mark.parametrize("action", [
    {"type": "dance"}, {}, {"type": 5}, {"type": "play"},
    {"type": "play", "card": "R5", "extra": 1}, {"type": "play", "card": "r5"},
    {"type": "play", "card": "R0"}, {"type": "play", "card": "R10"},
    {"type": "play", "card": 5}, {"type": "meinz", "card": "R5"},
    {"type": "exchange", "give": "R5"}, {"type": "discard", "card": None}, "play",
])
def test_malformed_actions_are_invalid(action: object) -> None:
    game = dealt(EXAMPLE_DEAL)
    discard(game, "B9", "Y9", "G9", "Y8")
    refused(game, 0, action, ErrorCode.INVALID_ACTION)


@pytest.mark.parametrize(("people", "seat"), [(4, 4), (4, -1), (3, 3), (4, True)])
def test_seats_outside_the_table_are_invalid(people: int, seat: int) -> None:
    game = Willi.new(people, {}, 0)
    refused(game, seat, {"type": "pass"}, ErrorCode.INVALID_ACTION)


def test_wrong_phase_comes_before_not_your_turn_before_card_checks() -> None:
    game = dealt(EXAMPLE_DEAL)
    discard(game, "B9", "Y9", "G9", "Y8")
    refused(game, 3, {"type": "meinz"}, ErrorCode.WRONG_PHASE)
    refused(game, 3, {"type": "play", "card": "R5"}, ErrorCode.NOT_YOUR_TURN)
    refused(game, 0, {"type": "play", "card": "R1"}, ErrorCode.CARD_NOT_IN_HAND)
    play_cards(game, "R5")
    refused(game, 1, {"type": "play", "card": "R5"}, ErrorCode.CARD_NOT_IN_HAND)
    refused(game, 1, {"type": "play", "card": "B1"}, ErrorCode.MUST_FOLLOW)


# --------------------------------------------------------------------- views


def test_a_seat_sees_its_own_hand_only() -> None:
    game = dealt(EXAMPLE_DEAL)
    discard(game, "B9", "Y9", "G9", "Y8")
    view = game.view(1)
    assert view["seat"] == 1 and view["legal"] == []
    assert view["hands"] == [None, game.state.hands[1], None, None]
    assert view["hand_sizes"] == [8, 8, 8, 8]
    assert game.view(0)["legal"] == game.legal_actions(0)
    spectator = game.view(None)
    assert spectator["hands"] == [None] * 4 and spectator["legal"] == []
    assert not cards_shown(spectator)


def test_the_monster_stack_is_hidden_from_everyone() -> None:
    game = dealt(MONSTER_DEAL, people=3)
    discard(game, "B9", "Y9", "G9")
    stack = set(game.state.hands[3])
    for viewer in [None, 0, 1, 2]:
        view = game.view(viewer)
        assert view["hands"][3] is None and not cards_shown(view) & stack
    assert game.view(0)["monster"] == 3
    with pytest.raises(RuleError):
        game.view(3)


def test_summary_visibility_is_made_from_the_views() -> None:
    game = dealt(MONSTER_DEAL, people=3)
    visible = game.summary()["visible"]
    assert visible == [game.view(seat)["hands"] for seat in range(3)]
    assert [len(row) for row in visible] == [4, 4, 4]


def test_played_tricks_of_the_round_are_public() -> None:
    game = _example_first_trick()
    act(game, 2, "pass")
    trick = game.view(None)["tricks"][0]
    assert trick == {"plays": [[0, "R5"], [1, "Y5"], [2, "R2"], [3, "R3"]], "winner": 2,
                     "caller": None, "exchange": None}


# ----------------------------------------------------------------- turn clock


def test_default_action_passes_in_windows_and_exchanges() -> None:
    game = _example_first_trick()
    assert game.default_action(2) == {"type": "pass"}
    assert game.default_action(0) is None
    act(game, 2, "pass")
    assert game.default_action(2) == game.legal_actions(2)[0]
    act(game, 2, "play", card="B2")
    assert game.default_action(2) == {"type": "pass"}

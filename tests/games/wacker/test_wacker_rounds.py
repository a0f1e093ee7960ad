"""Willi Wacker: round end, scoring, game end, views, storage and the turn clock default."""

from __future__ import annotations

import json

from shared.games.errors import ErrorCode
from shared.games.wacker.engine import WilliWacker
from tests.support.engines import act, refused
from tests.support.wacker import dealt, drained, kinds


def test_the_round_ends_when_the_talon_is_empty_and_a_hand_is_emptied() -> None:
    game = drained(dealt([["B4", "B4", "TRINK"], ["B2", "B2", "B7"], ["B3", "B3", "B8"]]))
    act(game, 0, "lay", cards=["B4", "B4"])
    act(game, 1, "lay", cards=["B2"])
    act(game, 2, "lay", cards=["B3", "B3"])
    events = act(game, 0, "action", card="TRINK", tray="t1")
    assert kinds(events) == ["action", "drunk", "round_over", "deal", "turn"]
    assert events[2] == {"type": "round_over", "round": 1, "drunk": [8, 0, 0],
                         "scores": [8, 0, 0]}
    summary = game.summary()
    assert (summary["round"], summary["dealer"], summary["to_act"]) == (2, 0, [1])
    assert summary["completed_rounds"] == [{"drunk": [8, 0, 0]}]
    assert summary["trays"] == [] and summary["drunk"] == [0, 0, 0]  # face-up trays score 0
    assert all(len(hand) == 7 for hand in summary["hands"]) and summary["talon_size"] == 89


def test_tray_ids_start_again_each_round() -> None:
    game = drained(dealt([["B1"], ["B2", "B2"], ["B3"]]))
    act(game, 0, "lay", cards=["B1"])
    card = next(card for card in game.state.hands[1] if card.startswith("B"))
    assert act(game, 1, "lay", cards=[card])[0]["tray"] == "t1"


def test_an_empty_hand_does_not_end_the_round_while_the_talon_has_cards() -> None:
    game = dealt([["B1"], [], ["B3"]])
    act(game, 0, "lay", cards=["B1"])
    assert game.summary()["round"] == 1 and game.view(None)["hand_sizes"] == [7, 7, 1]


def test_the_round_ends_as_the_last_talon_card_is_drawn_if_a_hand_is_empty() -> None:
    game = drained(dealt([["B1", "B2"], [], ["B3"]]), keep=1)
    events = act(game, 0, "lay", cards=["B1"])
    assert kinds(events) == ["lay", "draw", "round_over", "deal", "turn"]


def test_the_round_end_waits_until_the_duel_is_resolved() -> None:
    game = drained(dealt([["B1", "FLORA", "PRUEGEL", "B2"], ["B5", "PRUEGEL"], ["B7", "B8"]]))
    act(game, 0, "lay", cards=["B1"])
    act(game, 1, "lay", cards=["B5"])
    act(game, 2, "lay", cards=["B7"])
    act(game, 0, "action", card="FLORA", tray="t2")
    act(game, 1, "respond", card="PRUEGEL")  # seat 1's last card
    assert game.summary()["to_act"] == [0] and game.summary()["round"] == 1
    events = act(game, 0, "respond", card="PRUEGEL")  # seat 1 cannot answer any more
    assert kinds(events) == ["respond", "tray_stolen"]
    assert game.summary()["phase"] == "after_flora"
    assert kinds(act(game, 0, "pass"))[:2] == ["pass", "round_over"]


def test_the_game_ends_after_the_round_reaching_the_target_and_ties_share() -> None:
    game = drained(dealt([["B4", "TRINK", "B1"], ["B4", "TRINK"], ["B5", "B6", "B7"]],
                         target=4))
    act(game, 0, "lay", cards=["B4"])
    act(game, 1, "lay", cards=["B4"])
    act(game, 2, "lay", cards=["B5"])
    act(game, 0, "action", card="TRINK", tray="t1")
    events = act(game, 1, "action", card="TRINK", tray="t2")
    assert events[-1] == {"type": "game_over", "winners": [0, 1], "scores": [4, 4, 0]}
    summary = game.summary()
    assert (summary["over"], summary["phase"], summary["winners"]) == (True, "over", [0, 1])
    assert game.over and game.winners() == [0, 1] and game.to_act() == []
    assert game.legal_actions(0) == [] and game.default_action(0) is None
    refused(game, 0, {"type": "lay", "cards": ["B1"]}, ErrorCode.GAME_OVER)
    refused(game, 0, {"type": "lay", "cards": ["B9"]}, ErrorCode.INVALID_ACTION)


def test_max_rounds_ends_the_game_even_below_the_target() -> None:
    game = drained(dealt([["B1", "TRINK"], ["B2", "B3"], ["B3"]], max_rounds=1))
    act(game, 0, "lay", cards=["B1"])
    act(game, 1, "lay", cards=["B2"])
    events = act(game, 2, "lay", cards=["B3"])
    assert events[-1] == {"type": "game_over", "winners": [0, 1, 2], "scores": [0, 0, 0]}


def test_a_view_shows_the_own_hand_only() -> None:
    game = dealt([["B1", "TRINK"], ["FLORA", "B8"], ["ZAPFENSTREICH"]])
    view = game.view(1)
    assert view["seat"] == 1 and view["hand"] == ["FLORA", "B8"]
    assert view["hand_sizes"] == [2, 2, 1] and view["talon_size"] == 105
    assert view["legal"] == game.legal_actions(1) == []
    assert game.view(0)["legal"] == game.legal_actions(0) != []
    text = json.dumps({key: value for key, value in view.items() if key != "hand"})
    assert not any(card in text for card in ("B1", "TRINK", "ZAPFENSTREICH", "FLORA", "B8"))
    spectator = game.view(None)
    assert spectator["seat"] is None and "hand" not in spectator and spectator["legal"] == []


def test_summary_has_the_conformance_fields_and_visible_is_built_from_views() -> None:
    game = dealt([["B1"], ["B2"], ["B3"]])
    summary = game.summary()
    for key in ("round", "dealer", "phase", "to_act", "hands", "talon_size", "trays", "drunk",
                "scores", "completed_rounds", "over", "winners", "visible"):
        assert key in summary
    assert summary["visible"] == [[["B1"], None, None], [None, ["B2"], None],
                                  [None, None, ["B3"]]]


def test_drunk_trays_show_only_as_beer_totals() -> None:
    game = dealt([["B4", "B4", "TRINK"], ["B1"], ["B1"]])
    act(game, 0, "lay", cards=["B4", "B4"])
    act(game, 1, "lay", cards=["B1"])
    act(game, 2, "lay", cards=["B1"])
    act(game, 0, "action", card="TRINK", tray="t1")
    view = game.view(2)
    assert view["drunk"] == [8, 0, 0] and "t1" not in json.dumps(view["trays"])


def test_state_round_trips_mid_duel_and_plays_on_identically() -> None:
    game = dealt([["B1", "B2", "B3"], ["B4", "PRUEGEL", "B5"], ["SCHNORRER", "B8"]], dealer=1)
    act(game, 2, "action", card="SCHNORRER", picks={"1": 2})
    stored = json.loads(json.dumps(game.to_dict()))
    copy = WilliWacker.from_dict(stored)
    assert copy.to_dict() == game.to_dict() and copy.summary() == game.summary()
    for seat in (0, 1):
        assert act(copy, seat, "pass") == act(game, seat, "pass")
    assert copy.to_dict() == game.to_dict()
    assert stored != copy.to_dict()  # the restored game shares nothing with its source


def test_the_turn_clock_plays_on_turn_and_passes_in_duels() -> None:
    game = dealt([["B5", "B5", "TRINK"], ["FLORA", "B1"], ["B2"]], talon=["B1"] * 9)
    play = game.default_action(0)
    assert play in game.legal_actions(0) and play == {"type": "lay", "cards": ["B5", "B5"]}
    assert game.default_action(1) is None
    game.apply(0, play)
    act(game, 1, "action", card="FLORA", tray="t1")
    assert game.default_action(0) == {"type": "pass"}
    act(game, 0, "pass")
    assert game.default_action(1) == {"type": "pass"}

"""The deadline policy: the idle close (people's changes move it, the clock's own commits do
not) and a round's time limit (kept while the round runs, a new one for the next round)."""

from __future__ import annotations

import dataclasses

from shared.games.wacker.engine import WilliWacker
from shared.games.waldi.engine import WieWaldi
from shared.tables.clocks import IDLE_KEY, deadline_policy, expire, shown_deadlines
from shared.tables.records import CommitRecord, TableMeta
from shared.tables.store import Change

IDLE = 600.0
BOT_DELAY = 1.0
policy = deadline_policy(BOT_DELAY, IDLE)


def started(turn_seconds: float) -> tuple[WilliWacker, TableMeta, CommitRecord]:
    """Anna (seat 0, on turn) and two server bots; the game's first commit at t=100."""
    meta = TableMeta("t1", "willi-wacker", ["anna", "", ""],
                     bots={"1": "heuristic", "2": "heuristic"}, turn_seconds=turn_seconds)
    game = WilliWacker.new(3, {"first_dealer": 2}, 1)
    deadlines = policy(None, Change(game, [{"type": "game_started"}], meta), 100.0)
    return game, meta, CommitRecord(1, 100.0, meta, game.to_dict(), [], deadlines)


def lay(game: WilliWacker, seat: int, meta: TableMeta) -> Change:
    """The seat lays a tray (ends its turn without a duel)."""
    action = next(a for a in game.legal_actions(seat) if a["type"] == "lay")
    return Change(game, game.apply(seat, action), meta, seat, action)


def after(head: CommitRecord, change: Change, at: float) -> CommitRecord:
    return CommitRecord(head.seq + 1, at, change.meta, change.game.to_dict(), change.events,
                        policy(head, change, at), change.actor, change.action)


def test_a_game_starts_with_an_idle_deadline_even_without_a_turn_clock() -> None:
    _game, _meta, head = started(turn_seconds=0)
    assert head.deadlines == {IDLE_KEY: 100.0 + IDLE}


def test_a_persons_action_moves_the_idle_deadline_and_a_bots_move_does_not() -> None:
    game, meta, head = started(turn_seconds=0)
    head = after(head, lay(game, 0, meta), 200.0)
    assert head.deadlines == {"1": 200.0 + BOT_DELAY, IDLE_KEY: 200.0 + IDLE}
    bot_move = expire(head, 200.0 + BOT_DELAY)
    assert bot_move.actor == 1
    head = after(head, bot_move, 201.0)
    assert head.deadlines == {"2": 201.0 + BOT_DELAY, IDLE_KEY: 200.0 + IDLE}


def test_a_timed_out_default_does_not_move_the_idle_deadline() -> None:
    _game, _meta, head = started(turn_seconds=30)
    assert head.deadlines == {"0": 130.0, IDLE_KEY: 100.0 + IDLE}
    timed_out = expire(head, 130.0)
    assert timed_out.events[0] == {"type": "timed_out", "seat": 0}
    assert after(head, timed_out, 130.0).deadlines[IDLE_KEY] == 100.0 + IDLE


def test_a_seating_change_and_a_new_game_move_it() -> None:
    game, meta, head = started(turn_seconds=0)
    left = dataclasses.replace(meta, bots={**meta.bots, "0": "heuristic"})
    head = after(head, Change(game, [{"type": "seat_bot", "seat": 0}], left), 300.0)
    assert head.deadlines == {"0": 300.0 + BOT_DELAY, IDLE_KEY: 300.0 + IDLE}
    next_game = dataclasses.replace(meta, game_no=2)
    fresh = WilliWacker.new(3, {}, 2)
    assert policy(head, Change(fresh, [], next_game), 400.0)[IDLE_KEY] == 400.0 + IDLE


def test_the_idle_deadline_closes_the_game_and_nothing_is_owed_after() -> None:
    _game, _meta, head = started(turn_seconds=0)
    closing = expire(head, 100.0 + IDLE)
    assert closing.events == [{"type": "table_closed", "reason": "idle"}]
    assert closing.meta.closed == "idle" and not closing.game.over
    assert closing.game.to_dict() == head.state
    assert after(head, closing, 100.0 + IDLE).deadlines == {}


def test_clients_are_not_shown_the_idle_deadline() -> None:
    assert shown_deadlines({"0": 1.0, "round:2": 2.0, IDLE_KEY: 3.0}) == {"0": 1.0, "round:2": 2.0}


def test_a_round_time_limit_is_kept_through_the_round_and_renewed_for_the_next() -> None:
    meta = TableMeta("t2", "wie-waldi", ["anna", "ben", "cleo"])
    game = WieWaldi.new(3, {"round_seconds": 60}, 4)
    assert game.round_limit() == (1, 60.0)
    head = CommitRecord(1, 100.0, meta, game.to_dict(), [],
                        policy(None, Change(game, [], meta), 100.0))
    assert head.deadlines == {"round:1": 160.0, IDLE_KEY: 100.0 + IDLE}
    draw = Change(game, game.apply(0, {"type": "draw", "pile": 0}), meta, 0, {"type": "draw", "pile": 0})
    assert policy(head, draw, 120.0) == {"round:1": 160.0, IDLE_KEY: 120.0 + IDLE}
    time_up = Change(game, game.time_up(1), meta)
    assert game.round_limit() == (2, 60.0)
    assert policy(head, time_up, 170.0) == {"round:2": 230.0, IDLE_KEY: 170.0 + IDLE}


def test_a_game_without_round_time_limit_has_no_round_deadline() -> None:
    unlimited = WieWaldi.new(3, {"round_seconds": None}, 4)
    assert unlimited.round_limit() is None
    assert WilliWacker.new(3, {}, 1).round_limit() is None
    meta = TableMeta("t3", "wie-waldi", ["anna", "ben", "cleo"])
    assert policy(None, Change(unlimited, [], meta), 100.0) == {IDLE_KEY: 100.0 + IDLE}


def test_a_game_played_by_notification_waits_twice_its_clock_before_the_idle_close() -> None:
    day = 86_400.0
    _game, meta, head = started(turn_seconds=day)
    assert head.deadlines == {"0": 100.0 + day, IDLE_KEY: 100.0 + 2 * day}
    # Left to stand-in bots alone, it closes after the usual idle time.
    left = dataclasses.replace(meta, bots={"0": "heuristic", "1": "heuristic", "2": "heuristic"})
    game = WilliWacker.new(3, {"first_dealer": 2}, 1)
    assert policy(None, Change(game, [{"type": "game_started"}], left), 100.0)[IDLE_KEY] == 100.0 + IDLE

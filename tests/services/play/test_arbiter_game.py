"""A whole Wie Waldi game of 4 bot clients as fast as they can, spread over two arbiter replicas.

The table comes from the lobby. Afterwards the Redis log is checked commit by
commit (no card lost or doubled), against every acknowledged action, against a
replay on a fresh engine from the same seed, against every client's final
picture and stream (reconnecting to the other replica along the way), and
against the results on JetStream.
"""

from __future__ import annotations

import json
import random

import nats
import pytest

from services.tools.perf.arbiter import BotSeat, play_table, seat_players
from shared.config import Settings
from shared.games.waldi.engine import WieWaldi
from shared.infra.runtime import Runtime
from shared.tables.records import CommitRecord
from tests.support.arbiters import (
    SEATS,
    card_places,
    full_deck,
    players,
    second_devices,
)
from tests.support.stack import close_all, stored_log

pytestmark = pytest.mark.integration

ROUND_SECONDS = 12


def replay(log: list[CommitRecord]) -> None:
    """Apply the logged actions (and time limits) to a fresh engine from the table's seed:
    the same events and the same state at every commit."""
    meta = log[0].meta
    game = WieWaldi.new(len(meta.players), meta.options, meta.seed)
    assert game.to_dict() == log[0].state
    for record in log[1:]:
        if record.actor is None:  # the clock: the round's time was up
            time_up = record.events[0]
            assert time_up["type"] == "time_up"
            events = [time_up, *game.time_up(time_up["round"])]
        else:
            assert record.action is not None
            events = game.apply(record.actor, record.action)
        assert events == record.events, record.seq
        assert game.to_dict() == record.state, record.seq


async def results_on_jetstream(settings: Settings, table_id: str) -> list[dict[str, object]]:
    """The table's round and game results as the scoring side would read them."""
    client = await nats.connect(settings.nats_url)
    try:
        sub = await client.jetstream().subscribe(f"{settings.key_prefix}.results.wie-waldi.*",
                                                 ordered_consumer=True)
        found = []
        while True:
            try:
                msg = await sub.next_msg(timeout=0.5)
            except nats.errors.TimeoutError:
                return found
            payload = json.loads(msg.data)
            if payload["table_id"] == table_id:
                found.append(payload)
    finally:
        await client.close()


async def test_a_whole_game_as_fast_as_bots_can_over_two_replicas(
        stack: dict[str, str], arbiters: list[str], runtime: Runtime, settings: Settings) -> None:
    clients = await players(stack, arbiters)
    # Each seat's stream drops every 150 updates and resumes on the other replica.
    devices = second_devices(clients, stack, arbiters)
    try:
        # Rounds normally end by Stop within seconds; the limit only bounds a slow machine.
        table_id = await seat_players(clients, round_seconds=ROUND_SECONDS)
        seats = [BotSeat(client, table_id, seat, random.Random(seat), resume_every=150,
                         resume_via=[devices[seat]]) for seat, client in enumerate(clients)]
        await play_table(seats, seconds=4 * ROUND_SECONDS)
        log = await stored_log(runtime, table_id)
        head = log[-1]
        final = head.game()
        assert final.over

        # The log: 1..n without gaps; every commit holds every card exactly once.
        assert [r.seq for r in log] == list(range(1, head.seq + 1))
        assert all(card_places(r.state) == full_deck() for r in log)

        # Acknowledged actions are exactly the logged ones, at the seq the reply said.
        by_seq = {r.seq: r for r in log}
        acknowledged = [s for seat in seats for s in seat.sent if s.seq is not None]
        assert sorted(s.seq for s in acknowledged) == [r.seq for r in log if r.actor is not None]
        for sent in acknowledged:
            record = by_seq[sent.seq]
            assert (record.actor, record.action) == (sent.seat, sent.action)
        replay(log)

        for seat in seats:
            assert seat.latest is not None and seat.latest.seq == head.seq
            assert seat.latest.seat == seat.seat
            assert seat.latest.view == final.view(seat.seat)
            assert seat.seen == list(range(1, head.seq + 1)), "a gap or duplicate in the stream"
            assert seat.reconnects >= 2

        # Each round ends in one commit (Stop, dead end or time limit), and nothing sent for a
        # round was applied after that commit.
        ends = {e["round"]: r.seq for r in log for e in r.events if e["type"] == "round_over"}
        assert sorted(ends) == [1, 2, 3]
        for r in log:
            types = [e["type"] for e in r.events]
            assert types.count("stop") <= 1 and ("stop" not in types or "round_over" in types)
        for sent in acknowledged:
            assert sent.seq is not None and sent.seq <= ends[sent.round_no]
        lost_races = {"STALE", "NO_MATCH", "CARD_NOT_IN_HAND", "NOT_ALLOWED", "GAME_OVER"}
        assert {s.code for seat in seats for s in seat.sent} <= {"", *lost_races}

        # Results reached JetStream once each, as committed.
        results = await results_on_jetstream(settings, table_id)
        assert sorted((p["seq"], p["event"]["type"]) for p in results) == sorted(
            (r.seq, e["type"]) for r in log for e in r.events if e["type"] in ("round_over", "game_over"))
        game_over = next(p for p in results if p["event"]["type"] == "game_over")
        assert game_over["event"]["scores"] == final.view(None)["scores"]
        assert len(game_over["players"]) == SEATS
    finally:
        await close_all([*clients, *devices])

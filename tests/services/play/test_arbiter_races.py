"""Races on two arbiter replicas over real gRPC, Redis and NATS: one winner, nothing lost, Stop is final."""

from __future__ import annotations

import asyncio
import random

import grpc
import pytest

from services.play.table_play import TableTurns
from shared.api.stammtisch.v1 import arbiter_pb2
from shared.games.waldi.bots import HeuristicBot
from shared.games.waldi.engine import WieWaldi
from shared.infra.runtime import Runtime
from shared.rpc.actions import action_proto
from shared.sdk.client import StammtischClient
from tests.support.arbiters import (
    SEATS,
    attempt,
    card_places,
    following,
    full_deck,
    players,
    rigged_game,
    second_devices,
    store_table,
)
from tests.support.stack import close_all, eventually, stored_log

pytestmark = pytest.mark.integration

#: Seat 0 lays the head Hr (open end r); every seat then holds a middle with left colour r
#: and a right colour that is not r, so whichever lands first, no other fits the new end.
RACE_TOPS = [{0: "Hr", 1: "Mrg"}, {0: "Mrb"}, {0: "Mry"}, {0: "Mrg"}]


async def _race_ready_table(runtime: Runtime, clients: list[StammtischClient]) -> str:
    """A table where d1 (a head, end r) waits and every seat holds a middle that fits it."""
    table_id = await store_table(runtime, clients, rigged_game(RACE_TOPS))
    for seat, action in [(0, {"type": "draw", "pile": 0}), (0, {"type": "place_head"}),
                         (0, {"type": "draw", "pile": 1}), (1, {"type": "draw", "pile": 0}),
                         (2, {"type": "draw", "pile": 0}), (3, {"type": "draw", "pile": 0})]:
        assert isinstance(await attempt(clients[seat], table_id, action), int)
    return table_id


Call = tuple[StammtischClient, str, dict[str, object], int | None]


async def _at_once(calls: list[Call]) -> list[int | str]:
    """Release every call (client, table, action, round) at the same instant."""
    start = asyncio.Event()

    async def one(client: StammtischClient, table_id: str, action: dict[str, object],
                  round_no: int | None) -> int | str:
        await start.wait()
        return await attempt(client, table_id, action, round_no)

    tasks = [asyncio.create_task(one(*call)) for call in calls]
    await asyncio.sleep(0.05)
    start.set()
    return list(await asyncio.gather(*tasks))


async def test_many_clients_racing_for_one_open_end_leave_one_winner(
        stack: dict[str, str], arbiters: list[str], runtime: Runtime) -> None:
    clients = await players(stack, arbiters)
    # Every seat also plays from a second device on the other replica.
    devices = second_devices(clients, stack, arbiters)
    try:
        tables = await asyncio.gather(*(_race_ready_table(runtime, clients) for _ in range(4)))
        attach = {"type": "attach", "dog": "d1", "at": 1}
        calls: list[Call] = [(client, table_id, attach, 1) for table_id in tables
                             for client in (*clients, *devices)]
        random.Random(5).shuffle(calls)
        outcomes = await _at_once(calls)
        for table_id in tables:
            mine = [o for call, o in zip(calls, outcomes, strict=True) if call[1] == table_id]
            assert sum(isinstance(o, int) for o in mine) == 1, mine
            assert sorted(o for o in mine if isinstance(o, str)) == ["STALE"] * (2 * SEATS - 1)
            log = await stored_log(runtime, table_id)
            assert [r.seq for r in log] == list(range(1, len(log) + 1))
            assert all(card_places(r.state) == full_deck() for r in log)
            head = log[-1].game().summary()
            dog = head["dogs"][0]
            assert len(dog["cards"]) == 2 and dog["by"][1] == log[-1].actor
            # The losers still hold their cards: a refusal changed nothing.
            assert sum(card is not None for card in head["held"]) == SEATS - 1
    finally:
        await close_all([*clients, *devices])


async def test_racing_without_at_the_losers_no_longer_match(
        stack: dict[str, str], arbiters: list[str], runtime: Runtime) -> None:
    clients = await players(stack, arbiters)
    try:
        table_id = await _race_ready_table(runtime, clients)
        outcomes = await _at_once([(c, table_id, {"type": "attach", "dog": "d1"}, None) for c in clients])
        assert sum(isinstance(o, int) for o in outcomes) == 1, outcomes
        assert sorted(o for o in outcomes if isinstance(o, str)) == ["NO_MATCH"] * (SEATS - 1)
        log = await stored_log(runtime, table_id)
        assert all(card_places(r.state) == full_deck() for r in log)
    finally:
        await close_all(clients)


def _one_move_from_stop(seed: int) -> tuple[WieWaldi, int, dict[str, object]]:
    """A game played by heuristic bots up to the first moment some seat can call Stop."""
    game = WieWaldi.new(SEATS, {}, seed)
    rng, bots = random.Random(seed), [HeuristicBot() for _ in range(SEATS)]
    while True:
        for seat in game.to_act():
            for action in game.legal_actions(seat):
                trial = WieWaldi.from_dict(game.to_dict())
                if any(e["type"] == "stop" for e in trial.apply(seat, action)):
                    return game, seat, action
        seat = rng.choice(game.to_act())
        game.apply(seat, bots[seat].choose(game.view(seat), rng))


async def test_stop_is_one_commit_for_everybody_and_closes_its_round(
        stack: dict[str, str], arbiters: list[str], runtime: Runtime) -> None:
    clients = await players(stack, arbiters)
    devices = second_devices(clients, stack, arbiters)
    try:
        game, stopper, stop_action = _one_move_from_stop(seed=11)
        round_no = game.view(None)["round"]
        assert round_no < 3
        table_id = await store_table(runtime, clients, game)
        others = [seat for seat in range(SEATS) if seat != stopper]
        async with following(clients[0], table_id) as seen_a, following(devices[1], table_id) as seen_b:
            # The stopper and, at the same instant, every other seat from both of its devices.
            racers = [(device, action) for seat in others for device in (clients[seat], devices[seat])
                      for action in game.legal_actions(seat)[:2]]
            outcomes = await _at_once([(clients[stopper], table_id, stop_action, round_no)]
                                      + [(device, table_id, action, round_no) for device, action in racers])
            stop_seq = outcomes[0]
            assert isinstance(stop_seq, int)
            await eventually(lambda: all(any(u.seq == stop_seq for u in s) for s in (seen_a, seen_b)),
                             what="both streams to show the Stop")
        for seen in (seen_a, seen_b):
            stop_updates = [u for u in seen if any(e["type"] == "stop" for e in u.events)]
            assert [u.seq for u in stop_updates] == [stop_seq]
            types = [e["type"] for e in stop_updates[0].events]
            assert types[-3:] == ["stop", "round_over", "round_started"]
        assert all(seq < stop_seq for seq in outcomes[1:] if isinstance(seq, int)), outcomes
        # Later calls still meant for the old round are refused, though a draw would be legal now.
        draw = {"type": "draw", "pile": 0}
        late = await asyncio.gather(*(attempt(clients[seat], table_id, draw, round_no) for seat in others))
        assert late == ["STALE"] * len(others)
        log = await stored_log(runtime, table_id)
        assert all(card_places(r.state) == full_deck() for r in log)
        assert [r.seq for r in log if r.seq > stop_seq] == []
        # Without a round an action goes to whatever round runs now (the guard is opt-in per call).
        assert isinstance(await attempt(clients[others[0]], table_id, draw), int)
        assert (await stored_log(runtime, table_id))[-1].state["round"] == round_no + 1
    finally:
        await close_all([*clients, *devices])


async def test_the_round_time_limit_ends_each_round_once_across_replicas(
        stack: dict[str, str], arbiters: list[str], runtime: Runtime) -> None:
    clients = await players(stack, arbiters)
    limit = {"round_seconds": 0.3}
    try:
        table_id = await store_table(runtime, clients, WieWaldi.new(SEATS, limit, 3), options=limit)
        draw = {"type": "draw", "pile": 0}
        async with following(clients[0], table_id) as seen:
            assert isinstance(await attempt(clients[1], table_id, draw, 1), int)
            await eventually(lambda: any(e["type"] == "round_over" for u in seen for e in u.events),
                             what="the round to end by its time limit")
        # Both replicas' clocks saw the deadline; one commit ended the round.
        assert await attempt(clients[1], table_id, draw, 1) == "STALE"
        log = await stored_log(runtime, table_id)
        ends = [r for r in log if any(e["type"] == "time_up" for e in r.events)]
        assert sorted(r.events[0]["round"] for r in ends) == list(range(1, len(ends) + 1))
        first = ends[0]
        assert first.actor is None
        assert [e["type"] for e in first.events] == ["time_up", "round_over", "round_started"]
        assert first.events[1]["end"] == "time_up"
        # Every update tells when the running round's time is up (seat -1: the whole table).
        by_seq = {u.seq: u for u in seen}
        assert by_seq[1].deadlines == {-1: pytest.approx(log[0].at + 0.3, abs=1e-3)}
        assert by_seq[first.seq].deadlines == {-1: pytest.approx(first.at + 0.3, abs=1e-3)}
        assert all(card_places(r.state) == full_deck() for r in log)
    finally:
        await close_all(clients)


async def test_bad_requests_get_clear_statuses(stack: dict[str, str], arbiters: list[str],
                                               runtime: Runtime) -> None:
    clients = await players(stack, arbiters)
    stranger = (await players(stack, arbiters, 1))[0]
    try:
        table_id = await store_table(runtime, clients, rigged_game(RACE_TOPS))
        draw = action_proto({"type": "draw", "pile": 0})
        cases = [
            (stranger, {"table_id": table_id, "action": draw}, grpc.StatusCode.PERMISSION_DENIED),
            (clients[0], {"table_id": "x" * 65, "action": draw}, grpc.StatusCode.INVALID_ARGUMENT),
            (clients[0], {"table_id": "", "action": draw}, grpc.StatusCode.INVALID_ARGUMENT),
            (clients[0], {"table_id": "nope", "action": draw}, grpc.StatusCode.NOT_FOUND),
            (clients[0], {"table_id": table_id, "action": draw, "round": 0},
             grpc.StatusCode.INVALID_ARGUMENT),
            (clients[0], {"table_id": table_id, "action": draw, "action_id": ""},
             grpc.StatusCode.INVALID_ARGUMENT),
        ]
        for client, fields, code in cases:
            request = arbiter_pb2.ArbiterServiceActRequest(**{"action_id": "a1", **fields})
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await client.arbiter.Act(request, metadata=client.auth)
            assert info.value.code() == code, (fields, info.value.details())
        call = clients[0].arbiter.Subscribe(arbiter_pb2.ArbiterServiceSubscribeRequest(
            table_id=table_id, after_seq=-1), metadata=clients[0].auth)
        with pytest.raises(grpc.aio.AioRpcError) as info:
            async for _reply in call:
                pass
        assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    finally:
        await close_all([*clients, stranger])


async def test_a_replica_lets_one_table_commit_in_arrival_order_and_forgets_idle_tables() -> None:
    turns, order = TableTurns(), []

    async def take(name: str) -> None:
        async with turns.turn("t1"):
            await asyncio.sleep(0.01)
            order.append(name)

    await asyncio.gather(*(take(str(i)) for i in range(5)))
    assert order == ["0", "1", "2", "3", "4"]
    assert len(turns) == 0

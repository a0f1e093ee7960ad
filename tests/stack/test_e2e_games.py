"""Whole games through the real API, as mobile clients play them.

Four SDK clients log in, sit down through the lobby and play with the
heuristic bot's choices over gRPC to the end; the checks look at everything
each client received, at the Redis log, and at the results on JetStream.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import random
import re
from collections.abc import Mapping
from typing import Any

import grpc
import pytest

from services.host.runner import running_services
from shared.config import Settings
from shared.games.catalog import CATALOGUE
from shared.games.registry import bot_levels
from shared.infra.runtime import Runtime
from shared.sdk.botplayer import play_seat
from shared.sdk.client import Endpoints, RefusedAction, StammtischClient, Update
from shared.tables.records import CommitRecord
from tests.support.stack import close_all, seated_players, stored_log

pytestmark = pytest.mark.integration

#: Every installed game, from the catalogue, with its options for a short game: a new game
#: is played here with no edit.
GAMES = [(name, dict(game.short_options)) for name, game in sorted(CATALOGUE.items())]
CARD = re.compile(r'"([A-Z][A-Z0-9]{1,12})"')


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """Bots and clocks fast enough for tests."""
    return dataclasses.replace(settings, bot_delay_seconds=0.01)


async def _collect(client: StammtischClient, table_id: str, into: list[Update],
                   after_seq: int = 0) -> None:
    """Everything the client receives until the game is over."""
    async for update in client.updates(table_id, after_seq):
        into.append(update)
        if update.view.get("over"):
            return


def _cards(data: Any) -> set[str]:
    return set(CARD.findall(json.dumps(data)))


def _secret_before(before: CommitRecord, record: CommitRecord, seat: int) -> set[str]:
    """Cards other seats (not the actor) held before the commit that ``seat`` could not know."""
    game = before.game()
    hands = game.summary().get("hands", [])
    known = _cards(game.view(seat)) | _cards(game.view(None))
    if record.actor is not None and record.actor < len(hands):  # games with hands: the actor's
        known |= _cards(hands[record.actor])
    return {card for owner, hand in enumerate(hands) if owner not in (seat, record.actor)
            for card in hand or []} - known


def _assert_no_leak(updates: list[Update], seat: int, log: Mapping[int, CommitRecord]) -> None:
    """Each update is exactly the seat's own view (whose redaction the engine tests prove),
    and its events reveal no card another seat held unseen."""
    for update in updates:
        record = log[update.seq]
        assert update.view == json.loads(json.dumps(record.game().view(seat))), update.seq
        if update.seq > 1:
            leaked = _cards(update.events) & _secret_before(log[update.seq - 1], record, seat)
            assert not leaked, (update.seq, leaked, update.events)


@pytest.mark.parametrize(("game", "options"), GAMES, ids=[g for g, _ in GAMES])
async def test_four_clients_play_a_whole_game_over_grpc(
        stack: dict[str, str], runtime: Runtime, settings: Settings, game: str,
        options: dict[str, int]) -> None:
    results = await runtime.js.pull_subscribe(f"{settings.key_prefix}.results.{game}.game",
                                              durable=f"e2e-{game}")
    seats = min(4, CATALOGUE[game].max_seats)
    clients, table_id = await seated_players(Endpoints.of(stack), game, seats, turn_seconds=0, **options)
    received: list[list[Update]] = [[] for _ in clients]
    try:
        watchers = [asyncio.create_task(_collect(c, table_id, received[i]))
                    for i, c in enumerate(clients)]
        finals = await asyncio.wait_for(asyncio.gather(*(
            play_seat(c, table_id, bot_levels(game)["heuristic"](), random.Random(i))
            for i, c in enumerate(clients))), 120)
        await asyncio.wait_for(asyncio.gather(*watchers), 30)
    finally:
        await close_all(clients)
    log = {r.seq: r for r in await stored_log(runtime, table_id)}
    head = log[max(log)]
    assert head.game().over
    for seat, (final, updates) in enumerate(zip(finals, received, strict=True)):
        assert final.view == json.loads(json.dumps(head.game().view(seat)))
        assert [u.seq for u in updates] == sorted(log), "every commit exactly once, in order"
        _assert_no_leak(updates, seat, log)
    events_by_seat = [[(u.seq, u.events) for u in updates] for updates in received]
    assert all(events == events_by_seat[0] for events in events_by_seat), "events are public"
    message = (await results.fetch(1, timeout=10))[0]
    payload = json.loads(message.data)
    assert payload["table_id"] == table_id and payload["event"]["winners"] == head.game().winners()


async def test_a_client_that_drops_and_resumes_misses_nothing_and_sees_nothing_twice(
        stack: dict[str, str], runtime: Runtime) -> None:
    clients, table_id = await seated_players(Endpoints.of(stack), "willi", 4, turn_seconds=0)
    seen: list[Update] = []
    try:
        player = asyncio.gather(*(play_seat(c, table_id, bot_levels("willi")["heuristic"](),
                                            random.Random(i)) for i, c in enumerate(clients)))
        follower = asyncio.create_task(_collect(clients[1], table_id, seen))
        while len(seen) < 40:
            await asyncio.sleep(0.01)
        follower.cancel()  # the connection drops mid-game
        await asyncio.gather(follower, return_exceptions=True)
        await asyncio.sleep(0.2)  # the game goes on meanwhile
        await asyncio.wait_for(_collect(clients[1], table_id, seen, after_seq=seen[-1].seq), 120)
        await asyncio.wait_for(player, 120)
    finally:
        await close_all(clients)
    log = await stored_log(runtime, table_id)
    assert [u.seq for u in seen] == [r.seq for r in log]


async def test_a_retried_action_id_applies_once(stack: dict[str, str], runtime: Runtime) -> None:
    clients, table_id = await seated_players(Endpoints.of(stack), "willi", 4, turn_seconds=0)
    try:
        view = (await clients[2].view(table_id)).view
        discard = view["legal"][0]
        first, again = await asyncio.gather(clients[2].act(table_id, discard, action_id="same-id"),
                                            clients[2].act(table_id, discard, action_id="same-id"))
        third = await clients[2].act(table_id, discard, action_id="same-id")
    finally:
        await close_all(clients)
    assert first.seq == again.seq == third.seq
    discards = [r for r in await stored_log(runtime, table_id) if r.actor == 2]
    assert len(discards) == 1


async def test_a_token_can_only_act_for_its_own_seat(stack: dict[str, str]) -> None:
    clients, table_id = await seated_players(Endpoints.of(stack), "willi", 4, turn_seconds=0)
    outsider = StammtischClient(Endpoints.of(stack))
    try:
        await outsider.login("intruder")
        seat_zero_card = (await clients[0].view(table_id)).view["legal"][0]
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await outsider.act(table_id, seat_zero_card)
        assert info.value.code() == grpc.StatusCode.PERMISSION_DENIED
        spectator = await outsider.view(table_id)
        assert spectator.seat == -1 and spectator.view["legal"] == []
        assert all(hand is None for hand in spectator.view["hands"])
        with pytest.raises(RefusedAction) as refused:  # seat 1 holds other cards
            await clients[1].act(table_id, {"type": "discard", "card": "Z9"})
        assert refused.value.code == "INVALID_ACTION"
    finally:
        await close_all([*clients, outsider])


async def test_two_engine_replicas_serve_one_table_consistently(
        stack: dict[str, str], settings: Settings, runtime: Runtime) -> None:
    async with running_services(settings, ["engine"]) as second:
        other = f"127.0.0.1:{second[0].port}"
        endpoints = [Endpoints.of(stack, engine=stack["engine"] if i % 2 else other) for i in range(4)]
        clients, table_id = await seated_players(endpoints, "willi-stich", 4, turn_seconds=0, start_round=17)
        try:
            finals = await asyncio.wait_for(asyncio.gather(*(
                play_seat(c, table_id, bot_levels("willi-stich")["heuristic"](), random.Random(i))
                for i, c in enumerate(clients))), 120)
        finally:
            await close_all(clients)
    log = await stored_log(runtime, table_id)
    assert [r.seq for r in log] == list(range(1, len(log) + 1))
    for seat, final in enumerate(finals):
        assert final.seq == log[-1].seq
        assert final.view == json.loads(json.dumps(log[-1].game().view(seat)))


async def test_an_expired_turn_clock_applies_exactly_one_default(
        stack: dict[str, str], settings: Settings, runtime: Runtime) -> None:
    async with running_services(settings, ["engine"]):  # a second replica's clock races too
        clients, table_id = await seated_players(Endpoints.of(stack), "willi", 4, turn_seconds=1)
        try:
            await asyncio.sleep(1.6)  # nobody discards: every seat's clock expires once
            log = await stored_log(runtime, table_id)
        finally:
            await close_all(clients)
    timed_out = [e["seat"] for r in log for e in r.events if e["type"] == "timed_out"]
    assert sorted(timed_out) == [0, 1, 2, 3]
    assert log[-1].game().view(None)["phase"] == "play"
    assert [r.seq for r in log] == list(range(1, len(log) + 1))

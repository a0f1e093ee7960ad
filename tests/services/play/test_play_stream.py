"""The bidirectional Play stream through real gRPC: updates and answers on one stream."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import random
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest

from shared.api.stammtisch.v1 import (
    arbiter_pb2,
    arbiter_pb2_grpc,
    common_pb2,
    engine_pb2,
    engine_pb2_grpc,
    errors_pb2,
)
from shared.config import Settings
from shared.games.registry import bot_levels
from shared.rpc.actions import action_proto
from shared.sdk.botplayer import play_seat
from shared.sdk.client import Endpoints, RefusedAction, StammtischClient, updates_of
from tests.support.stack import close_all, quick_stack, seated_players

pytestmark = pytest.mark.integration


def _ends(stack: dict[str, str]) -> Endpoints:
    return Endpoints.of(stack)


def _legal_seat(views: list[dict[str, Any]]) -> int:
    return next(seat for seat, view in enumerate(views) if view["legal"])


async def _views(clients: list[StammtischClient], table_id: str) -> list[dict[str, Any]]:
    return [(await client.view(table_id)).view for client in clients]


class RawPlay:
    """An EngineService.Play call driven message by message."""

    def __init__(self, client: StammtischClient, table_id: str, after_seq: int = 0,
                 answers_with_updates: bool = False) -> None:
        self.call = client.engine.Play(metadata=client.auth)
        self.table_id = table_id
        self.after_seq = after_seq
        self.answers_with_updates = answers_with_updates

    async def open(self) -> RawPlay:
        await self.call.initial_metadata()
        await self.call.write(engine_pb2.PlayRequest(table_id=self.table_id, after_seq=self.after_seq,
                                                     answers_with_updates=self.answers_with_updates))
        return self

    async def send(self, action_id: str, action: dict[str, Any], table_id: str = "") -> None:
        await self.call.write(engine_pb2.PlayRequest(table_id=table_id, action_id=action_id,
                                                     action=action_proto(action)))

    async def answer(self) -> Any:
        """The next answer, skipping updates."""
        while True:
            reply = await asyncio.wait_for(self.call.read(), 10)
            assert reply is not grpc.aio.EOF
            if reply.HasField("answer"):
                return reply.answer

    async def updates_until(self, seq: int) -> list[int]:
        """Seqs of the updates up to ``seq``, skipping answers."""
        seen: list[int] = []
        while not seen or seen[-1] < seq:
            reply = await asyncio.wait_for(self.call.read(), 10)
            assert reply is not grpc.aio.EOF
            if reply.HasField("update"):
                seen.append(reply.update.seq)
        return seen


async def test_a_whole_game_plays_over_play_streams(stack: dict[str, str]) -> None:
    clients, table_id = await seated_players(_ends(stack), "willi", 4, turn_seconds=0)
    try:
        bot = bot_levels("willi")["heuristic"]
        finals = await asyncio.wait_for(asyncio.gather(*(
            play_seat(client, table_id, bot(), random.Random(seat), streamed=True)
            for seat, client in enumerate(clients))), 120)
        assert all(final.view["over"] for final in finals)
        assert len({final.seq for final in finals}) == 1  # everyone saw the last commit
    finally:
        await close_all(clients)


async def test_a_refused_action_is_answered_in_the_stream_and_the_stream_goes_on(
        stack: dict[str, str]) -> None:
    clients, table_id = await seated_players(_ends(stack), "willi", 4, turn_seconds=0)
    try:
        views = await _views(clients, table_id)
        actor = _legal_seat(views)
        idle = (actor + 1) % 4
        action = bot_levels("willi")["heuristic"]().choose(views[actor], random.Random(1))
        async with clients[idle].play(table_id) as idle_stream:
            with pytest.raises(RefusedAction) as refused:
                await idle_stream.act(action)  # not this seat's turn
            assert refused.value.code in {"NOT_YOUR_TURN", "WRONG_PHASE", "CARD_NOT_IN_HAND"}
            with pytest.raises(RefusedAction) as malformed:
                await idle_stream.act({"type": ""})
            assert malformed.value.code == "INVALID_ACTION"
            async with clients[actor].play(table_id) as actor_stream:
                seq = await actor_stream.act(action)
            seen = [(await idle_stream.next_update()).seq for _ in range(seq)]
            assert seen == list(range(1, seq + 1))  # the refused seat's stream is still live
    finally:
        await close_all(clients)


async def test_resuming_after_a_drop_gives_every_update_once(stack: dict[str, str]) -> None:
    clients, table_id = await seated_players(_ends(stack), "willi", 4, turn_seconds=0)
    bots = [bot_levels("willi")["heuristic"]() for _ in clients]
    rng = random.Random(3)
    try:
        first = await RawPlay(clients[0], table_id).open()
        last = 0
        for _ in range(4):
            views = await _views(clients, table_id)
            actor = _legal_seat(views)
            last = (await clients[actor].act(table_id, bots[actor].choose(views[actor], rng))).seq
        assert await first.updates_until(2) == [1, 2]
        first.call.cancel()  # the drop
        for _ in range(3):
            views = await _views(clients, table_id)
            actor = _legal_seat(views)
            last = (await clients[actor].act(table_id, bots[actor].choose(views[actor], rng))).seq
        resumed = await RawPlay(clients[0], table_id, after_seq=2).open()
        assert await resumed.updates_until(last) == list(range(3, last + 1))
        resumed.call.cancel()
    finally:
        await close_all(clients)


async def test_a_retried_action_id_applies_once_on_any_stream_or_act(stack: dict[str, str]) -> None:
    clients, table_id = await seated_players(_ends(stack), "willi", 4, turn_seconds=0)
    try:
        views = await _views(clients, table_id)
        actor = _legal_seat(views)
        action = bot_levels("willi")["heuristic"]().choose(views[actor], random.Random(2))
        head = (await clients[actor].view(table_id)).seq
        one = await RawPlay(clients[actor], table_id).open()
        await one.send("move-1", action)
        await one.send("move-1", action)
        answers = [await one.answer(), await one.answer()]
        assert [a.action_id for a in answers] == ["move-1", "move-1"]
        assert {a.seq for a in answers} == {head + 1}
        one.call.cancel()
        two = await RawPlay(clients[actor], table_id).open()
        await two.send("move-1", action)
        assert (await two.answer()).seq == head + 1
        two.call.cancel()
        assert (await clients[actor].act(table_id, action, action_id="move-1")).seq == head + 1
        assert (await clients[actor].view(table_id)).seq == head + 1  # applied once
    finally:
        await close_all(clients)


async def test_answers_ride_with_their_commits_update_in_the_actions_order(stack: dict[str, str]) -> None:
    """Asked for, an applied action's answer comes in the message of its commit's update, not
    alone; a refusal has no update and comes alone, but never before an earlier answer."""
    clients, table_id = await seated_players(_ends(stack), "willi", 4, turn_seconds=0)
    rng = random.Random(4)
    try:
        views = await _views(clients, table_id)
        actor = _legal_seat(views)
        action = bot_levels("willi")["heuristic"]().choose(views[actor], rng)
        head = (await clients[actor].view(table_id)).seq
        stream = await RawPlay(clients[actor], table_id, after_seq=head, answers_with_updates=True).open()
        await stream.send("ride-1", action)
        await stream.send("ride-2", action)  # the same move again: refused, its turn is over
        replies = []
        while sum(len(reply.answers) + reply.HasField("answer") for reply in replies) < 2:
            reply = await asyncio.wait_for(stream.call.read(), 10)
            assert reply is not grpc.aio.EOF
            replies.append(reply)
        carrying = replies[0]
        assert carrying.update.seq == head + 1
        assert [(a.action_id, a.seq) for a in carrying.answers] == [("ride-1", head + 1)]
        alone = replies[-1]
        assert alone.answer.action_id == "ride-2" and alone.answer.HasField("refused")
        assert len(replies) == 2
        stream.call.cancel()

        plain = await RawPlay(clients[actor], table_id, after_seq=head + 1).open()
        await plain.send("ride-1", action)  # answered before: alone, on a stream that did not ask
        assert (await plain.answer()).seq == head + 1
        plain.call.cancel()
    finally:
        await close_all(clients)


async def test_a_stream_plays_one_table_and_needs_a_token(stack: dict[str, str]) -> None:
    clients, table_id = await seated_players(_ends(stack), "willi", 4, turn_seconds=0)
    try:
        play = await RawPlay(clients[0], table_id).open()
        await play.send("a1", {"type": "pass"}, table_id="another-table")
        with pytest.raises(grpc.aio.AioRpcError) as other:
            await play.answer()
        assert other.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        async with grpc.aio.insecure_channel(stack["engine"]) as channel:
            call = engine_pb2_grpc.EngineServiceStub(channel).Play(
                iter([engine_pb2.PlayRequest(table_id=table_id)]))
            with pytest.raises(grpc.aio.AioRpcError) as anonymous:
                await call.read()
        assert anonymous.value.code() == grpc.StatusCode.UNAUTHENTICATED
    finally:
        await close_all(clients)


@pytest.fixture
async def slow_stack(settings: Settings) -> AsyncIterator[Endpoints]:
    """The stack with 5 calls per second and player (bursts of 10)."""
    async with quick_stack(dataclasses.replace(settings, actions_per_second=5.0)) as ends:
        yield ends


async def test_each_action_on_a_stream_is_rate_limited_like_a_call(slow_stack: Endpoints) -> None:
    clients, table_id = await seated_players(slow_stack, "willi", 4, turn_seconds=0)
    try:
        play = await RawPlay(clients[1], table_id).open()
        answered = 0
        with pytest.raises(grpc.aio.AioRpcError) as limited:
            for number in range(30):  # one at a time: a write after the call's end fails locally
                await play.send(f"spam-{number}", {"type": ""})
                answer = await play.answer()
                assert answer.refused.code == errors_pb2.ERROR_CODE_INVALID_ACTION
                answered += 1
        assert limited.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert 5 <= answered < 30
    finally:
        await close_all(clients)


async def test_wie_waldi_plays_over_the_arbiters_stream_with_its_round_guard(
        stack: dict[str, str]) -> None:
    clients, table_id = await seated_players(_ends(stack), "wie-waldi", 2, turn_seconds=0)
    try:
        start = await clients[0].view(table_id)
        call = clients[0].arbiter.Play(metadata=clients[0].auth)
        await call.write(arbiter_pb2.ArbiterServicePlayRequest(table_id=table_id, after_seq=start.seq))
        action = bot_levels("wie-waldi")["heuristic"]().choose(start.view, random.Random(4))
        await call.write(arbiter_pb2.ArbiterServicePlayRequest(
            action_id="late", action=action_proto(action), round=start.view["round"] + 1))
        await call.write(arbiter_pb2.ArbiterServicePlayRequest(
            action_id="now", action=action_proto(action), round=start.view["round"]))
        answers: dict[str, Any] = {}
        updates: list[int] = []
        while len(answers) < 2 or not updates:
            reply = await asyncio.wait_for(call.read(), 10)
            if reply.HasField("answer"):
                answers[reply.answer.action_id] = reply.answer
            else:
                updates.append(reply.update.seq)
                assert json.loads(reply.update.view_json)["round"] == start.view["round"]
        assert answers["late"].refused.code == errors_pb2.ERROR_CODE_STALE
        assert answers["now"].seq == start.seq + 1 == updates[0]
        call.cancel()
        assert isinstance(arbiter_pb2_grpc.ArbiterServiceStub, type)
    finally:
        await close_all(clients)


async def _read_until(call: Any, seq: int) -> tuple[list[Any], list[Any]]:
    """The responses of a stream up to the update ``seq``, and the updates they carried."""
    responses: list[Any] = []
    updates: list[Any] = []
    while not updates or updates[-1].seq < seq:
        reply = await asyncio.wait_for(call.read(), 10)
        assert reply is not grpc.aio.EOF
        if "answer" in reply.DESCRIPTOR.fields_by_name and reply.HasField("answer"):
            continue
        responses.append(reply)
        updates.extend(updates_of(reply))
    return responses, updates


def _bot_actions(clients: list[StammtischClient], table_id: str, seed: int) -> Any:
    """A coroutine function: the seat whose turn it is acts as a bot; the commit's seq."""
    bots = [bot_levels("willi")["heuristic"]() for _ in clients]
    rng = random.Random(seed)

    async def act_once() -> int:
        views = await _views(clients, table_id)
        actor = _legal_seat(views)
        return (await clients[actor].act(table_id, bots[actor].choose(views[actor], rng))).seq

    return act_once


@dataclasses.dataclass
class _WilliLog:
    """A Willi table of seated players with a log of bot moves, and that log as one seat
    read it one update per message."""

    clients: list[StammtischClient]
    table_id: str
    act_once: Any
    singles: list[Any]
    expected: list[Any]


async def _willi_log(stack: dict[str, str], seed: int, reader: int, commits: int = 12) -> _WilliLog:
    """Seat four players, let bots make ``commits`` moves, read them back as ``reader``."""
    clients, table_id = await seated_players(_ends(stack), "willi", 4, turn_seconds=0)
    act_once = _bot_actions(clients, table_id, seed)
    try:
        last = 0
        for _ in range(commits):
            last = await act_once()
        plain = clients[reader].engine.Subscribe(engine_pb2.SubscribeRequest(table_id=table_id),
                                                 metadata=clients[reader].auth)
        singles, expected = await _read_until(plain, last)
        plain.cancel()
    except BaseException:
        await close_all(clients)
        raise
    return _WilliLog(clients, table_id, act_once, singles, expected)


async def test_a_stream_that_asks_for_batches_catches_up_in_few_messages(stack: dict[str, str]) -> None:
    """The same updates in the same order, several per message while the log is read (at most
    max_batch), live ones alone; a client that does not ask gets one per message."""
    log = await _willi_log(stack, 5, reader=0)
    clients, table_id, act_once, expected = log.clients, log.table_id, log.act_once, log.expected
    try:
        last = expected[-1].seq
        stub, auth = clients[0].engine, clients[0].auth
        assert len(log.singles) == len(expected) == last
        batched = stub.Subscribe(engine_pb2.SubscribeRequest(table_id=table_id, max_batch=5), metadata=auth)
        responses, updates = await _read_until(batched, last)
        assert [u.SerializeToString() for u in updates] == [u.SerializeToString() for u in expected]
        assert [len(updates_of(r)) for r in responses] == [5] * (last // 5) + [last % 5] * bool(last % 5)
        live = asyncio.ensure_future(_read_until(batched, last + 1))
        last = await act_once()
        live_responses, live_updates = await live
        assert [u.seq for u in live_updates] == [last] and live_responses[0].HasField("update")
        batched.cancel()

        play = stub.Play(metadata=auth)
        await play.initial_metadata()
        await play.write(engine_pb2.PlayRequest(table_id=table_id, max_batch=100))
        responses, updates = await _read_until(play, last)
        assert [r.WhichOneof("kind") for r in responses] == ["updates"]
        assert [u.seq for u in updates] == list(range(1, last + 1))
        play.cancel()

        refused = stub.Subscribe(engine_pb2.SubscribeRequest(table_id=table_id, max_batch=-1), metadata=auth)
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await refused.read()
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    finally:
        await close_all(clients)


async def test_last_view_only_sends_each_batch_s_last_view_and_every_commit_s_events(
        stack: dict[str, str]) -> None:
    """Asked for the last view only, a catch-up message's updates are the plain ones without
    their view, but the last one whole; a live update keeps its view; Play takes it too."""
    log = await _willi_log(stack, 6, reader=1)
    clients, table_id, act_once, expected = log.clients, log.table_id, log.act_once, log.expected
    try:
        last = expected[-1].seq
        stub, auth = clients[1].engine, clients[1].auth
        lean = stub.Subscribe(engine_pb2.SubscribeRequest(table_id=table_id, max_batch=5,
                                                          last_view_only=True), metadata=auth)
        responses, updates = await _read_until(lean, last)
        assert [len(updates_of(r)) for r in responses] == [5] * (last // 5) + [last % 5] * bool(last % 5)
        for response in responses:
            *before, final = updates_of(response)
            assert final.SerializeToString() == expected[final.seq - 1].SerializeToString()
            for update in before:
                whole = common_pb2.TableUpdate()
                whole.CopyFrom(expected[update.seq - 1])
                assert update.view_json == "" and whole.view_json != ""
                whole.view_json = ""
                assert update == whole
        live = asyncio.ensure_future(_read_until(lean, last + 1))
        last = await act_once()
        _responses, live_updates = await live
        assert [u.seq for u in live_updates] == [last] and json.loads(live_updates[0].view_json)["seat"] == 1
        lean.cancel()

        play = stub.Play(metadata=auth)
        await play.initial_metadata()
        await play.write(engine_pb2.PlayRequest(table_id=table_id, max_batch=100, last_view_only=True))
        _responses, updates = await _read_until(play, last)
        assert [u.seq for u in updates] == list(range(1, last + 1))
        assert [bool(u.view_json) for u in updates] == [False] * (last - 1) + [True]
        play.cancel()
    finally:
        await close_all(clients)

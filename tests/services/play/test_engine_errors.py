"""Bad input on every engine and arbiter RPC gets a clear status, never INTERNAL."""

from __future__ import annotations

import dataclasses

import grpc
import pytest

from shared.api.stammtisch.v1 import (
    arbiter_pb2,
    common_pb2,
    engine_pb2,
)
from shared.config import Settings
from shared.rpc.actions import action_proto
from shared.rpc.errors import rule_code_name, rule_violation_of
from shared.sdk.client import Endpoints, StammtischClient
from tests.support.stack import bot_table, log_in

pytestmark = pytest.mark.integration
Code = grpc.StatusCode


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return dataclasses.replace(settings, bot_delay_seconds=60.0)


async def _tables(stack: dict[str, str]) -> tuple[StammtischClient, str, str]:
    """A player seated at a running Willi table and at a running Wie Waldi table."""
    (client,) = await log_in(Endpoints.of(stack), "tester")
    return client, await bot_table(client, "willi", 4), await bot_table(client, "wie-waldi", 2)


async def _status(call: object) -> tuple[Code, str, str | None]:
    try:
        await call  # type: ignore[misc]
    except grpc.aio.AioRpcError as err:
        violation = rule_violation_of(err)
        return err.code(), err.details() or "", rule_code_name(violation) if violation else None
    raise AssertionError("the call succeeded")


async def test_engine_act_refuses_bad_input_with_clear_codes(stack: dict[str, str]) -> None:
    client, willi, waldi = await _tables(stack)
    engine, auth = client.engine, client.auth

    ids = iter(range(1000))

    def act(table: str, action: common_pb2.Action, action_id: str | None = None,
            round_no: int | None = None) -> object:
        action_id = f"a{next(ids)}" if action_id is None else action_id
        return engine.Act(engine_pb2.ActRequest(table_id=table, action_id=action_id, action=action,
                                                round=round_no), metadata=auth)

    cases = [
        (act("no-such-table", action_proto({"type": "pass"})), Code.NOT_FOUND, None),
        (act("", action_proto({"type": "pass"})), Code.INVALID_ARGUMENT, None),
        (act("bad id!", action_proto({"type": "pass"})), Code.INVALID_ARGUMENT, None),
        (act(willi, action_proto({"type": "pass"}), action_id=""), Code.INVALID_ARGUMENT, None),
        (act(willi, action_proto({"type": "pass"}), action_id="x" * 65), Code.INVALID_ARGUMENT, None),
        (act(willi, common_pb2.Action()), Code.INVALID_ARGUMENT, "INVALID_ACTION"),
        (act(willi, action_proto({"type": "fly"})), Code.INVALID_ARGUMENT, "INVALID_ACTION"),
        (act(willi, action_proto({"type": "discard"})), Code.INVALID_ARGUMENT, "INVALID_ACTION"),
        (act(willi, action_proto({"type": "discard", "card": "R1", "pile": 2})), Code.INVALID_ARGUMENT,
         "INVALID_ACTION"),
        (act(willi, action_proto({"type": "discard", "card": "Q99"})), Code.INVALID_ARGUMENT,
         "INVALID_ACTION"),
        (act(willi, action_proto({"type": "play", "card": "R1"})), Code.FAILED_PRECONDITION, "WRONG_PHASE"),
        (act(waldi, action_proto({"type": "draw", "pile": 0})), Code.FAILED_PRECONDITION, None),
        (act(willi, action_proto({"type": "chat", "text": "x" * 100_000})), Code.RESOURCE_EXHAUSTED, None),
        # fields_json that is no JSON object of fields: the request is malformed, no rules refusal.
        (act(willi, common_pb2.Action(type="discard", fields_json="[\"R1\"]")), Code.INVALID_ARGUMENT, None),
        (act(willi, common_pb2.Action(type="discard", fields_json="\"R1\"")), Code.INVALID_ARGUMENT, None),
        (act(willi, common_pb2.Action(type="discard", fields_json="{card: R1}")), Code.INVALID_ARGUMENT,
         None),
        (act(willi, common_pb2.Action(type="discard", fields_json="{\"type\": \"play\"}")),
         Code.INVALID_ARGUMENT, None),
        (act(willi, action_proto({"type": "chat", "text": "x" * 5000})), Code.INVALID_ARGUMENT, None),
        (act(waldi, action_proto({"type": "draw", "pile": 0}), round_no=0), Code.INVALID_ARGUMENT, None),
        # The round guard is the shared servicer's: a turn-based table refuses a stale round too.
        (act(willi, action_proto({"type": "pass"}), round_no=2), Code.ABORTED, "STALE"),
    ]
    try:
        for call, code, rule in cases:
            got, details, got_rule = await _status(call)
            assert (got, got_rule) == (code, rule), details
            assert details
        missing = engine.GetView(engine_pb2.GetViewRequest(table_id=willi))
        assert (await _status(missing))[0] == Code.UNAUTHENTICATED
    finally:
        await client.close()


async def test_views_and_streams_refuse_bad_input(stack: dict[str, str]) -> None:
    client, willi, waldi = await _tables(stack)
    auth = client.auth
    arbiter, engine = client.arbiter, client.engine

    async def first(stream: object) -> None:
        async for _ in stream:  # type: ignore[attr-defined]
            return

    cases = [
        (engine.GetView(engine_pb2.GetViewRequest(table_id="nope"), metadata=auth), Code.NOT_FOUND),
        (engine.GetView(engine_pb2.GetViewRequest(table_id=waldi), metadata=auth),
         Code.FAILED_PRECONDITION),
        (arbiter.GetView(arbiter_pb2.ArbiterServiceGetViewRequest(table_id=willi), metadata=auth),
         Code.FAILED_PRECONDITION),
        (first(engine.Subscribe(engine_pb2.SubscribeRequest(table_id=willi, after_seq=-1),
                                metadata=auth)), Code.INVALID_ARGUMENT),
        (first(engine.Subscribe(engine_pb2.SubscribeRequest(table_id="nope"), metadata=auth)),
         Code.NOT_FOUND),
        (first(arbiter.Subscribe(arbiter_pb2.ArbiterServiceSubscribeRequest(table_id=""),
                                 metadata=auth)), Code.INVALID_ARGUMENT),
        (first(engine.Subscribe(engine_pb2.SubscribeRequest(table_id=willi))), Code.UNAUTHENTICATED),
    ]
    try:
        for call, code in cases:
            got, details, _ = await _status(call)
            assert got == code, details
    finally:
        await client.close()


async def test_a_refusal_quoting_a_long_value_arrives_as_the_refusal(stack: dict[str, str]) -> None:
    """A rules message that quotes the request (a 5,000-character card) must still fit the
    status trailers: the client gets INVALID_ARGUMENT with its RuleViolation, not
    RESOURCE_EXHAUSTED with details that contradict the status."""
    client, willi, waldi = await _tables(stack)
    arbiter = client.arbiter
    try:
        for index, card in enumerate(("Q" * 4000, "ü" * 4000, "Z" * 4080)):
            calls = [
                client.engine.Act(engine_pb2.ActRequest(
                    table_id=willi, action_id=f"long{index}",
                    action=action_proto({"type": "discard", "card": card})), metadata=client.auth),
                arbiter.Act(arbiter_pb2.ArbiterServiceActRequest(
                    table_id=waldi, action_id=f"long{index}",
                    action=action_proto({"type": "place_head", "card": card})), metadata=client.auth),
            ]
            for call in calls:
                code, details, rule = await _status(call)
                assert (code, rule) == (Code.INVALID_ARGUMENT, "INVALID_ACTION"), details
                assert 0 < len(details) <= 300, details
    finally:
        await client.close()

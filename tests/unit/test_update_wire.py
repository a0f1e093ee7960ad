"""Updates sent as wire bytes: the framed bytes are exactly the response message gRPC would
have serialised, for every response type that carries an update."""

from __future__ import annotations

import pytest

from services.tableplay import play_response, with_update, with_updates
from services.tableupdates import field_bytes
from shared.api.stammtisch.v1 import arbiter_pb2, common_pb2, engine_pb2

RESPONSES = (engine_pb2.ActResponse, engine_pb2.GetViewResponse, engine_pb2.SubscribeResponse,
             engine_pb2.PlayResponse, arbiter_pb2.ArbiterServiceActResponse,
             arbiter_pb2.ArbiterServiceGetViewResponse, arbiter_pb2.ArbiterServiceSubscribeResponse,
             arbiter_pb2.ArbiterServicePlayResponse)


@pytest.mark.parametrize("view_chars", [0, 5, 200, 70_000])
@pytest.mark.parametrize("response", RESPONSES)
def test_framed_bytes_are_the_serialised_response(response: type, view_chars: int) -> None:
    update = common_pb2.TableUpdate(table_id="t1", seq=7, seat=2, view_json="x" * view_chars,
                                    events=[common_pb2.Event(type="draw", data_json="{}")])
    wire = with_update(response, update.SerializeToString())
    assert wire == response(update=update).SerializeToString()
    assert response.FromString(wire).update == update


def test_a_play_answer_stays_a_message_and_an_update_becomes_bytes() -> None:
    answer = common_pb2.PlayAnswer(action_id="a1", seq=3)
    assert play_response(answer, engine_pb2.PlayResponse) == engine_pb2.PlayResponse(answer=answer)
    update = common_pb2.TableUpdate(seq=3).SerializeToString()
    wire = play_response([update], engine_pb2.PlayResponse)
    assert engine_pb2.PlayResponse.FromString(wire).update.seq == 3


def _batch() -> list[common_pb2.TableUpdate]:
    return [common_pb2.TableUpdate(table_id="t1", seq=seq, seat=1, view_json="v" * seq) for seq in (4, 5, 6)]


@pytest.mark.parametrize("response", (engine_pb2.SubscribeResponse,
                                      arbiter_pb2.ArbiterServiceSubscribeResponse))
def test_a_batch_is_the_serialised_subscribe_response(response: type) -> None:
    batch = _batch()
    wire = with_updates(response, [update.SerializeToString() for update in batch])
    assert wire == response(updates=batch).SerializeToString()
    one = with_updates(response, [batch[0].SerializeToString()])
    assert one == response(update=batch[0]).SerializeToString()


@pytest.mark.parametrize("response", (engine_pb2.PlayResponse, arbiter_pb2.ArbiterServicePlayResponse))
def test_a_batch_is_the_serialised_play_response(response: type) -> None:
    batch = _batch()
    wire = play_response([update.SerializeToString() for update in batch], response)
    assert wire == response(updates=common_pb2.TableUpdates(updates=batch)).SerializeToString()


def test_an_empty_payload_is_still_the_field() -> None:
    assert field_bytes(1, b"") == b"\x0a\x00"

"""Updates sent as wire bytes: the framed bytes are exactly the response message gRPC would
have serialised, for every response type that carries an update."""

from __future__ import annotations

import pytest

from services.play.table_play import RidingAnswers, Updates, play_response, with_update, with_updates
from services.play.updates import field_bytes
from shared.api.stammtisch.v1 import arbiter_pb2, common_pb2, engine_pb2, errors_pb2

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
    wire = play_response(Updates(3, [update]), engine_pb2.PlayResponse)
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
    wire = play_response(Updates(6, [update.SerializeToString() for update in batch]), response)
    assert wire == response(updates=common_pb2.TableUpdates(updates=batch)).SerializeToString()


@pytest.mark.parametrize("response", (engine_pb2.PlayResponse, arbiter_pb2.ArbiterServicePlayResponse))
@pytest.mark.parametrize("count", [1, 3])
def test_answers_ride_in_the_serialised_play_response(response: type, count: int) -> None:
    batch = _batch()[:count]
    answers = [common_pb2.PlayAnswer(action_id="a4", seq=4), common_pb2.PlayAnswer(action_id="a6", seq=6)]
    wire = play_response(Updates(batch[-1].seq, [u.SerializeToString() for u in batch], answers), response)
    carried = response(update=batch[0]) if count == 1 else response(
        updates=common_pb2.TableUpdates(updates=batch))
    carried.answers.extend(answers)
    assert wire == carried.SerializeToString()
    assert list(response.FromString(wire).answers) == answers


def test_an_empty_payload_is_still_the_field() -> None:
    assert field_bytes(1, b"") == b"\x0a\x00"


def _answer(action_id: str, seq: int | None = None) -> common_pb2.PlayAnswer:
    if seq is None:
        return common_pb2.PlayAnswer(action_id=action_id, refused=errors_pb2.RuleViolation(message="no"))
    return common_pb2.PlayAnswer(action_id=action_id, seq=seq)


def test_waiting_answers_ride_with_their_update_and_keep_the_actions_order() -> None:
    riding = RidingAnswers(after_seq=10)
    assert not riding.wait(_answer("old", 9))  # its update went out before the stream opened
    assert not riding.wait(_answer("refused"))  # nothing waits: a refusal goes at once
    assert riding.wait(_answer("a", 11))
    assert riding.wait(_answer("refused-after-a"))  # behind "a", never before it
    assert riding.wait(_answer("b", 13))
    assert [a.action_id for a in riding.sent(11)] == ["a", "refused-after-a"]
    assert riding.sent(12) == []
    assert [a.action_id for a in riding.sent(14)] == ["b"]
    assert not riding.wait(_answer("late", 12))  # sent already

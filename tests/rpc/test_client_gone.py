"""A call whose client left ends as cancelled: no status sent, no traceback logged."""

from __future__ import annotations

import asyncio

import pytest
from grpc._cython.cygrpc import ExecuteBatchError
from structlog.testing import capture_logs

from shared.rpc.auth import TokenSigner
from shared.rpc.interceptors import RateLimiter, StammtischInterceptor


class _GoneCall:
    """The part of a servicer context the interceptor reads when a call fails."""

    def __init__(self, done: bool) -> None:
        self._done = done
        self.aborted = False

    def done(self) -> bool:
        return self._done

    async def abort(self, *args: object, **kwargs: object) -> None:
        self.aborted = True


def _interceptor() -> StammtischInterceptor:
    return StammtischInterceptor("lobby", TokenSigner("s" * 32, 60), RateLimiter(10, 20))


@pytest.mark.parametrize("done", [False, True])
async def test_a_handler_whose_own_abort_failed_is_cancelled_quietly(done: bool) -> None:
    """grpc's health Check aborts NOT_FOUND itself; when the client already left, that raises."""
    call = _GoneCall(done)
    with capture_logs() as lines, pytest.raises(asyncio.CancelledError):
        await _interceptor()._fail(call, ExecuteBatchError("Failed execute_batch"))  # type: ignore[arg-type]
    assert not call.aborted
    assert not [line for line in lines if line["log_level"] in ("error", "exception")]


async def test_a_crash_for_a_client_still_there_is_internal_and_logged() -> None:
    call = _GoneCall(False)
    with capture_logs() as lines:
        await _interceptor()._fail(call, ZeroDivisionError())  # type: ignore[arg-type]
    assert call.aborted
    assert [line["event"] for line in lines] == ["rpc_crashed"]


async def test_a_call_whose_send_failed_before_grpc_saw_the_client_leave_is_logged_cancelled() -> None:
    """Found by the fuzzer: a Play call with a 1 ms deadline whose first send failed in grpc-core
    while grpc did not yet count the call done was logged UNKNOWN, at error level."""
    async def handler(request: object, context: object) -> None:
        raise ExecuteBatchError("Failed execute_batch")

    call = _GoneCall(False)
    call.code = lambda: None  # type: ignore[attr-defined]  # no status set: nothing was sent
    wrapped = _interceptor()._wrap_unary(handler, "/grpc.health.v1.Health/Check", (), True)
    with capture_logs() as lines, pytest.raises(asyncio.CancelledError):
        await wrapped(object(), call)
    assert [(line["code"], line["log_level"]) for line in lines if line["event"] == "rpc"] == [
        ("CANCELLED", "info")]

"""A Play stream's helper tasks end with the stream, even when the stream's own task is
cancelled again while it stops them (grpc cancels a call for its deadline and again when it is
closed). Before, the second cancellation ended the stopping early: a feed task that had lost its
first cancellation went on, and the stream counted open, until the process stopped (found by
the fuzz test, seed 7: `fuzz-1118`, a Play call with a 1 ms deadline)."""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from services.play.table_play import _stop_all


async def _loses_its_first_cancellation() -> None:
    with contextlib.suppress(asyncio.CancelledError):
        await asyncio.sleep(3600)
    await asyncio.sleep(3600)


async def test_stopping_goes_on_when_the_stopper_is_cancelled_again() -> None:
    helper = asyncio.create_task(_loses_its_first_cancellation())
    await asyncio.sleep(0)
    stopper = asyncio.create_task(_stop_all([helper]))
    await asyncio.sleep(0.02)  # the helper swallowed the first cancellation
    stopper.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(stopper, 5)
    assert helper.done(), "the helper outlived its stream"

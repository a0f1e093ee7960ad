"""Helpers for long-running background tasks."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from shared.infra.runtime import UNREACHABLE


def not_cancelled() -> bool:
    """False once the current task was asked to stop: loops check this instead of ``while True``, so
    a library that swallows a CancelledError cannot keep them alive and hang shutdown."""
    task = asyncio.current_task()
    return task is None or not task.cancelling()


async def poll_forever(step: Callable[[], Awaitable[object]], interval: float, log: Any,
                       failure: str) -> None:
    """Run ``step`` until cancelled: again at once while it reports work done (truthy), else
    after ``interval``. A failing step is logged as ``failure`` and tried again after the
    interval, so a background loop outlives a passing Redis or NATS outage."""
    while not_cancelled():
        try:
            busy = await step()
        except UNREACHABLE as exc:  # a server away: one line, no traceback, every interval
            log.warning(failure, error=repr(exc), reason="unreachable")
            busy = False
        except Exception:
            log.exception(failure)
            busy = False
        if not busy:
            await asyncio.sleep(interval)

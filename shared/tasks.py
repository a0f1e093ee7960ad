"""Helpers for long-running background tasks."""

from __future__ import annotations

import asyncio


def not_cancelled() -> bool:
    """False once the current task was asked to stop.

    Loops check this instead of ``while True``: a client library that swallows
    a CancelledError (seen with redis-py) would otherwise keep the loop alive
    and hang shutdown.
    """
    task = asyncio.current_task()
    return task is None or not task.cancelling()

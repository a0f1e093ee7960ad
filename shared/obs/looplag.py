"""How late a server process's event loop runs what is ready: the first thing to look at when
the p99 of calls grows.

Every call a process serves waits its turn in one event loop. A probe sleeps a short while, again
and again, and records how much later than asked it woke (``stammtisch_event_loop_lag_seconds``):
how long the loop was busy with other work or the process was off the CPU. It wakes rarely
enough that an idle process hardly pays for it.
"""

from __future__ import annotations

import asyncio

from shared.infra.tasks import not_cancelled
from shared.obs.metrics import EVENT_LOOP_LAG

#: How long the probe sleeps at a time.
PROBE_SECONDS = 0.05


async def watch_loop_lag(interval: float = PROBE_SECONDS) -> None:
    """Record the loop's lag every ``interval`` until cancelled."""
    loop = asyncio.get_running_loop()
    while not_cancelled():
        asked = loop.time() + interval
        await asyncio.sleep(interval)
        EVENT_LOOP_LAG.observe(max(0.0, loop.time() - asked))

"""A server records how late its event loop runs, and the bench reads it from /metrics."""

from __future__ import annotations

import asyncio
import time

from prometheus_client import generate_latest

from services.tools.perf.server_loops import parsed
from shared.obs.looplag import watch_loop_lag


def _reading() -> tuple[float, float]:
    """(probes, probes later than 25 ms) of this process's histogram, as /metrics shows it."""
    lag = parsed(generate_latest().decode())
    return lag.count, lag.count - lag.within[0.025]


async def test_a_loop_kept_busy_is_recorded_late_and_the_bench_reads_it() -> None:
    probes, late = _reading()
    watcher = asyncio.create_task(watch_loop_lag(0.005))
    await asyncio.sleep(0.05)  # a few probes on time
    time.sleep(0.06)  # the loop is busy: the probe that sleeps meanwhile wakes late
    await asyncio.sleep(0.02)
    watcher.cancel()
    now_probes, now_late = _reading()
    assert now_probes - probes >= 3
    assert now_late - late >= 1

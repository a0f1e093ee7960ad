"""The bench's stall probe counts a stretch in which its thread could not run."""

from __future__ import annotations

import sys
import time

from services.perf.stalls import StallProbe


def test_a_stretch_the_probe_cannot_run_in_counts_as_one_stall() -> None:
    probe = StallProbe()
    probe.start()
    time.sleep(0.05)  # the probe runs freely
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1.0)  # this thread keeps the interpreter: the probe cannot wake
    try:
        busy_until = time.perf_counter() + 0.1
        while time.perf_counter() < busy_until:
            pass
    finally:
        sys.setswitchinterval(interval)
    time.sleep(0.05)
    stalls = probe.stop()
    assert stalls.count >= 1
    assert stalls.longest >= 0.05
    assert stalls.total >= stalls.longest


"""How often the machine itself stalled during a bench step.

On a shared virtual machine every process sometimes stops for tens of
milliseconds at once, the servers' event loops and the clients' alike (seen
here: both workers' loops late by 10 to 43 ms, again and again, for a second
at a time, in one half-load run and not in the next). Such a run's p99 says
more about the machine than about the servers. A thread of the bench process,
which has nothing else to do during a step, sleeps 2 ms at a time and counts
the wake-ups that came late by more than ``LATE``: the step prints them beside
its latencies.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

#: A wake-up later than this counts as a stall (a busy 2-core machine wakes a sleeper within
#: a few milliseconds).
LATE = 0.010
#: How long the probe sleeps at a time.
TICK = 0.002


@dataclass(frozen=True)
class Stalls:
    """The late wake-ups of one probe."""

    count: int
    longest: float
    total: float

    def line(self) -> str:
        """The step's line about them."""
        return (f"  machine stalls (a {TICK * 1e3:.0f} ms sleep of the bench process woke more than "
                f"{LATE * 1e3:.0f} ms late): {self.count}, the longest {self.longest * 1e3:.0f} ms, "
                f"{self.total:.2f} s in all")


class StallProbe:
    """Counts the machine's stalls from :meth:`start` to :meth:`stop`."""

    def __init__(self) -> None:
        self._stop = threading.Event()
        self._late: list[float] = []
        self._thread = threading.Thread(target=self._watch, name="stall-probe", daemon=True)

    def _watch(self) -> None:
        while not self._stop.is_set():
            asleep = time.perf_counter()
            time.sleep(TICK)
            late = time.perf_counter() - asleep - TICK
            if late > LATE:
                self._late.append(late)

    def start(self) -> None:
        """Begin counting."""
        self._thread.start()

    def stop(self) -> Stalls:
        """Stop counting; what was counted."""
        self._stop.set()
        self._thread.join()
        return Stalls(len(self._late), max(self._late, default=0.0), sum(self._late))

"""How late the servers' event loops ran during a bench step, from their own metric.

Every server process records how much later than asked its event loop woke a
probe (``stammtisch_event_loop_lag_seconds``, shared/obs/looplag.py). A step
reads that histogram from every worker before and after and prints how often
the loops ran late: on a shared 2-core machine, a run whose p99 doubles next
to an otherwise alike one shows it here (seen: both workers' loops late by 10
to 43 ms, again and again, for a second at a time, in one half-load run and
hardly at all in the next).
"""

from __future__ import annotations

import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass

from prometheus_client.parser import text_string_to_metric_families

from shared.obs.looplag import PROBE_SECONDS

METRIC = "stammtisch_event_loop_lag_seconds"
#: The lags a step's line counts probes beyond (bucket bounds of the metric).
SHOWN = (0.01, 0.025, 0.1)


@dataclass(frozen=True)
class LoopLag:
    """Probe counts summed over every server process: all of them, and those at most each bound."""

    count: float
    within: Mapping[float, float]

    def since(self, before: LoopLag) -> LoopLag:
        """What was recorded between ``before`` and this reading."""
        return LoopLag(self.count - before.count,
                       {bound: self.within[bound] - before.within[bound] for bound in SHOWN})

    def line(self) -> str:
        """The step's line about its loops."""
        if not self.count:
            return "  servers' event loops: no probe recorded"
        late = ", ".join(f"{self.count - self.within[bound]:,.0f} later than {bound * 1e3:.0f} ms"
                         for bound in SHOWN)
        return (f"  servers' event loops (a {PROBE_SECONDS * 1e3:.0f} ms probe, every worker): "
                f"{self.count:,.0f} wake-ups, {late}")


def parsed(text: str) -> LoopLag:
    """The loop-lag histogram in one process's /metrics text."""
    count, within = 0.0, dict.fromkeys(SHOWN, 0.0)
    for family in text_string_to_metric_families(text):
        if family.name != METRIC:
            continue
        for sample in family.samples:
            if sample.name == f"{METRIC}_count":
                count += sample.value
            elif sample.name == f"{METRIC}_bucket" and float(sample.labels["le"]) in within:
                within[float(sample.labels["le"])] += sample.value
    return LoopLag(count, within)


def loop_lag(endpoints: Mapping[str, str]) -> LoopLag:
    """The histogram summed over every server process (``metrics``, ``metrics2``, ...)."""
    readings = []
    for name, address in endpoints.items():
        if name.startswith("metrics"):
            with urllib.request.urlopen(f"http://{address}/metrics", timeout=10) as reply:
                readings.append(parsed(reply.read().decode()))
    return LoopLag(sum(reading.count for reading in readings),
                   {bound: sum(reading.within[bound] for reading in readings) for bound in SHOWN})

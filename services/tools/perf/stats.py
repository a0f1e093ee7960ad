"""Latency samples and how they are printed."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field


@dataclass
class Samples:
    """Durations in seconds of one kind of operation."""

    name: str
    values: list[float] = field(default_factory=list)

    def add(self, seconds: float) -> None:
        """Record one duration."""
        self.values.append(seconds)

    def quantile(self, q: float) -> float:
        """The q-quantile (0..1) in seconds; 0 without samples."""
        if not self.values:
            return 0.0
        ordered = sorted(self.values)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    def line(self) -> str:
        """'name  n=...  p50=... ms  p99=... ms'."""
        mean = statistics.fmean(self.values) if self.values else 0.0
        return (f"  {self.name:<44} n={len(self.values):<7} p50={self.quantile(0.5) * 1e3:8.3f} ms  "
                f"p99={self.quantile(0.99) * 1e3:8.3f} ms  mean={mean * 1e3:8.3f} ms")

"""Garbage collection tuned for a long-running event loop.

A full collection stops the event loop while it visits every tracked object, which under load
shows as the p99 of every call. So after start-up everything built so far is frozen out of the
collector's way, and young objects are collected in large batches: what a commit leaves behind
(its engine, kept until the table's next commit) mostly dies before a young collection looks at
it, and full collections come far less often.
"""

from __future__ import annotations

import gc

#: (young objects between collections, young collections per middle one, middle per full one);
#: CPython's defaults are (700, 10, 10).
THRESHOLDS = (20_000, 10, 50)


def settle_heap() -> None:
    """Call once the process is set up: collect once, freeze what is left, raise the thresholds."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*THRESHOLDS)

"""Garbage collection tuned for a long-running event loop.

Every full collection stops the event loop for as long as it takes to visit
every tracked object. In a server under load that was every few seconds and
up to 150 ms of CPU (the update cache alone holds a few hundred thousand
objects), which showed as the p99 of every call. After start-up, everything
imported and built so far stays for the life of the process: frozen, the
collector never visits it again; and young objects are collected in larger
batches, so full collections come about fifty times less often.

A collection costs in proportion to the objects still alive in the
generations it visits, so the young batch is large (20,000): the state a
commit leaves behind (its engine, kept until the table's next commit and the
updates cache lets go of it) mostly dies before a young collection looks at
it, instead of being visited there and again in the middle generation. In
`bench` (100 Wie Waldi tables, 15,500 actions) that cut the collector's time
from 1.0 s to 0.25 s.
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

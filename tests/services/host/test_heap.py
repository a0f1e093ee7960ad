"""A server process, once set up, keeps its start-up objects out of the collector's way."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from services.host.heap import THRESHOLDS, settle_heap


@pytest.fixture
def restored_gc() -> Iterator[None]:
    thresholds = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*thresholds)


@pytest.mark.usefixtures("restored_gc")
def test_settling_freezes_what_exists_and_raises_the_thresholds() -> None:
    kept = [object() for _ in range(10)], {"a": [1, 2]}
    settle_heap()
    assert gc.get_freeze_count() > 0
    assert gc.get_threshold() == THRESHOLDS
    assert kept

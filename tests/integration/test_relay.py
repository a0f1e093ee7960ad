"""The results outbox has one relay per process, however many game services the process runs."""

from __future__ import annotations

import asyncio

import pytest

from services.runner import running_services
from shared.config import Settings

pytestmark = pytest.mark.integration


async def test_engine_and_arbiter_in_one_process_share_one_relay(settings: Settings) -> None:
    async with running_services(settings, ["engine", "arbiter"]):
        relays = [t.get_name() for t in asyncio.all_tasks() if t.get_name().endswith(":results-relay")]
    assert len(relays) == 1, relays

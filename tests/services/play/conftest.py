"""Fixtures shared by the integration tests (the session's servers come from tests/conftest.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from services.host.runner import running_services
from shared.config import Settings


@pytest.fixture
async def arbiters(stack: dict[str, str], settings: Settings) -> AsyncIterator[list[str]]:
    """The stack's arbiter and a second replica (own connections, feeds and clocks) on the
    same Redis, NATS and prefix."""
    async with running_services(settings, ["arbiter"]) as running:
        yield [stack["arbiter"], f"127.0.0.1:{running[0].port}"]

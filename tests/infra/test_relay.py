"""Process-wide JetStream plumbing: one results relay per process, streams that keep their data."""

from __future__ import annotations

import asyncio

import pytest
from nats.js.api import StorageType

from services.host.runner import running_services
from shared.config import Settings
from shared.infra.runtime import Runtime, results_stream, table_events_stream

pytestmark = pytest.mark.integration


async def test_engine_and_arbiter_in_one_process_share_one_relay(settings: Settings) -> None:
    async with running_services(settings, ["engine", "arbiter"]):
        relays = [t.get_name() for t in asyncio.all_tasks() if t.get_name().endswith(":results-relay")]
    assert len(relays) == 1, relays


async def test_jetstream_streams_use_file_storage_and_the_configured_replicas(runtime: Runtime) -> None:
    for config in (results_stream(runtime.settings), table_events_stream(runtime.settings)):
        assert config.name is not None
        info = await runtime.js.stream_info(config.name)
        assert info.config.storage == StorageType.FILE
        assert info.config.num_replicas == runtime.settings.stream_replicas == 1

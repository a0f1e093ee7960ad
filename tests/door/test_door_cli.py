"""The command line through the door: --door and --ca (or STAMMTISCH_DOOR / STAMMTISCH_CA)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from services.host.launch import STAMMTISCH
from shared.config import Settings
from shared.sdk.client import StammtischClient
from shared.sdk.device import device_credentials
from tests.support.door import door_in_front
from tests.support.stack import bot_table, finish_game

pytestmark = pytest.mark.integration


async def _run(*args: str, **env: str) -> tuple[int, str]:
    process = await asyncio.create_subprocess_exec(
        STAMMTISCH, *args, env={**os.environ, **env}, stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    out, _ = await asyncio.wait_for(process.communicate(b""), 60)  # input ends at once
    return process.returncode or 0, out.decode()


async def test_history_through_the_door_with_its_ca(settings: Settings, tmp_path: Path) -> None:
    async with door_in_front(settings, tmp_path / "stack") as opened:
        device = tmp_path / "device.json"
        async with StammtischClient(opened.endpoints) as phone:
            await phone.login_device(*device_credentials(device), "Anna")
            table_id = await bot_table(phone, "willi", 4, turn_seconds=0)
            await finish_game([phone], table_id, "willi")
        code, out = await _run("history", "--device", str(device), "--door", f"grpcs://{opened.address}",
                               "--ca", opened.door.ca)
        assert code == 0 and table_id in out, out
        code, out = await _run("history", "--device", str(device), STAMMTISCH_DOOR=f"grpcs://{opened.address}",
                               STAMMTISCH_CA=opened.door.ca)
        assert code == 0 and table_id in out, out
        code, out = await _run("history", "--device", str(device), "--door", opened.address)
        assert code != 0 and "UNAVAILABLE" in out, "the system's roots do not trust the development CA"


async def test_the_terminal_plays_through_the_door(settings: Settings, tmp_path: Path) -> None:
    """`stammtisch play` through the door: a table with bots, the first view shown; end of input
    leaves the table."""
    async with door_in_front(settings, tmp_path) as opened:
        code, out = await _run("play", "willi", "--door", f"grpcs://{opened.address}", "--ca", opened.door.ca)
    assert "your move" in out and "you left the table" in out, out
    assert code == 130, "end of input leaves the table as Ctrl-C does"

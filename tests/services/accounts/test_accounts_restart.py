"""Done as a new user would: a device logs in to a launched `stammtisch up` and plays a game
against server bots; the stack is stopped and started again on the same data; the same device
gets the same player, the game is in its history, and `stammtisch verify` checks its deal."""

from __future__ import annotations

import json
import subprocess
import uuid
from pathlib import Path

import pytest

from services.host.launch import STAMMTISCH, LaunchedStack, start_stack
from shared.archive.messages import replay_to_json
from shared.infra.local import free_port
from shared.sdk.client import Endpoints, StammtischClient
from shared.sdk.device import device_credentials
from tests.support.stack import bot_table, eventually, finish_game

pytestmark = pytest.mark.integration


def _endpoints(stack: LaunchedStack) -> Endpoints:
    return Endpoints.of(stack.endpoints)


def _verify(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([STAMMTISCH, "verify", str(path)], capture_output=True, text=True, timeout=120)


async def test_a_device_keeps_its_player_and_history_across_a_restart(tmp_path: Path) -> None:
    env = {"REDIS_URL": f"redis://127.0.0.1:{free_port()}/0", "NATS_URL": f"nats://127.0.0.1:{free_port()}",
           "STAMMTISCH_KEY_PREFIX": "acct" + uuid.uuid4().hex[:8], "STAMMTISCH_LOG_LEVEL": "warning",
           "STAMMTISCH_BOT_DELAY": "0"}
    device_id, secret = device_credentials(tmp_path / "device.json")
    stack = start_stack(env, tmp_path / "data")
    try:
        async with StammtischClient(_endpoints(stack)) as phone:
            first = await phone.login_device(device_id, secret, "Anna")
            refresh = phone.refresh_token
            table_id = await bot_table(phone, "willi", 3, turn_seconds=0)
            await finish_game([phone], table_id, "willi")

            async def listed():  # type: ignore[no-untyped-def]
                return (await phone.my_games()).games
            await eventually(listed, 20.0, "the game in the history")
        stack.stop()

        stack = start_stack(env, tmp_path / "data")
        async with StammtischClient(_endpoints(stack)) as phone:
            again = await phone.login_device(device_id, secret)
            assert (again.player_id, again.created, again.display_name) == (first.player_id, False, "Anna")
            phone.refresh_token = refresh  # a refresh token from before the restart still works, once
            assert (await phone.refresh()).player_id == first.player_id
            games = (await phone.my_games()).games
            assert [(g.table_id, g.game_no, g.seat) for g in games] == [(table_id, 1, 0)]
            reply = await phone.replay(table_id)
            assert reply.summary.seats[0].name == "Anna"
    finally:
        stack.stop()

    saved = tmp_path / "replay.json"
    saved.write_text(replay_to_json(reply))
    checked = _verify(saved)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.startswith("OK willi")

    document = json.loads(saved.read_text())
    hands = json.loads(document["commits"][0]["stateJson"])
    hands["hands"][0][0], hands["hands"][1][0] = hands["hands"][1][0], hands["hands"][0][0]
    document["commits"][0]["stateJson"] = json.dumps(hands)
    saved.write_text(json.dumps(document))
    tampered = _verify(saved)
    assert tampered.returncode == 1 and "MISMATCH commit" in tampered.stdout
    saved.write_text("{not json")
    assert _verify(saved).returncode == 2

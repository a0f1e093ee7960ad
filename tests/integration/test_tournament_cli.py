"""A tournament from the shell: created with bot entrants, a person plays it with `stammtisch play`.

The stack runs as `stammtisch up` (a child process); the person is `stammtisch
play GAME --tournament ID` whose stdin answers every prompt with the first
legal move.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from services.launch import STAMMTISCH, launched_stack
from shared.config import SERVICE_NAMES

pytestmark = pytest.mark.integration


@pytest.mark.xfail(reason="issue 12, open: since the new terminal client and Play-stream bots landed, "
                   "`stammtisch play --tournament` stops following the seating after a table is gone "
                   "and times out", strict=False)
def test_create_join_with_play_and_see_the_final_standings(infra: tuple[str, str], tmp_path: Path) -> None:
    redis_url, nats_url = infra
    with launched_stack({"REDIS_URL": redis_url, "NATS_URL": nats_url, "STAMMTISCH_BOT_DELAY": "0.01",
                         "STAMMTISCH_LOG_LEVEL": "warning"}, tmp_path) as stack:
        ports = {f"STAMMTISCH_{name.upper()}_PORT": stack.endpoints[name].rsplit(":", 1)[1]
                 for name in SERVICE_NAMES}
        env = {**os.environ, **ports}
        organizer = subprocess.Popen(
            [STAMMTISCH, "tournament", "create", "--game", "willi-stich", "--capacity", "3",
             "--rounds", "2", "--table-size", "3", "--start-round", "19", "--start-in", "3",
             "--bots", "2", "--think", "0"], env=env, stdout=subprocess.PIPE, text=True)
        assert organizer.stdout is not None
        found = re.search(r"tournament ([0-9a-f]{32})", organizer.stdout.readline())
        assert found, "create printed no tournament id"
        tournament_id = found.group(1)
        person = subprocess.run([STAMMTISCH, "play", "willi-stich", "--tournament", tournament_id,
                                 "--name", "Person"], env=env, input="1\n" * 5000, text=True,
                                capture_output=True, timeout=180)
        assert organizer.wait(timeout=60) == 0
        assert person.returncode == 0, person.stdout[-2000:] + person.stderr[-2000:]
        assert "you: table 1 seat" in person.stdout and "] finished" in person.stdout
        standings = subprocess.run([STAMMTISCH, "tournament", "standings", tournament_id], env=env,
                                   capture_output=True, text=True, timeout=60)
    assert "TOURNAMENT_STATUS_FINISHED" in standings.stdout
    assert "Person" in standings.stdout and standings.stdout.count("Bot ") == 2

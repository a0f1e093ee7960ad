"""Tournaments from the shell: `stammtisch tournament ...` and `stammtisch play --tournament`.

The stack runs as `stammtisch up` (a child process), every command is the
real CLI. The person is `stammtisch play GAME --tournament ID` whose stdin
(a pipe, as a script would give it) answers every prompt with the first
choice; bot entrants brought by `tournament create --bots` fill the field.
The organizer is the player of a device file that `create` makes, and the
organizer controls act later with it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from services.host.launch import STAMMTISCH, launched_stack
from shared.config import SERVICE_NAMES

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def cli_env(infra: tuple[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """The environment a shell next to a running `stammtisch up` has (its ports, a home of its own)."""
    redis_url, nats_url = infra
    data = tmp_path_factory.mktemp("cli")
    with launched_stack({"REDIS_URL": redis_url, "NATS_URL": nats_url, "STAMMTISCH_BOT_DELAY": "0.01",
                         "STAMMTISCH_LOG_LEVEL": "warning"}, data) as stack:
        ports = {f"STAMMTISCH_{name.upper()}_PORT": stack.endpoints[name].rsplit(":", 1)[1]
                 for name in SERVICE_NAMES}
        page = stack.endpoints["tournaments"]  # the banner's "tournaments http://HOST:PORT/tournaments"
        ports["STAMMTISCH_TOURNAMENT_PAGE_PORT"] = page.split("/")[0].rsplit(":", 1)[1]
        yield {**os.environ, **ports, "XDG_CONFIG_HOME": str(data / "config")}


def _the_page_logs_in_its_organizer_only(env: dict[str, str], tid: str, stranger: tuple[str, str]) -> None:
    """`tournament page` hands the organizer a link whose #fragment logs in; others get the page."""
    link = stammtisch(env, "tournament", "page", tid)
    assert link.returncode == 0, link.stderr
    url, _, token = link.stdout.strip().partition("#token=")
    assert url == f"http://127.0.0.1:{env['STAMMTISCH_TOURNAMENT_PAGE_PORT']}/tournaments/{tid}" and token
    me = urllib.request.Request(url.replace(f"/tournaments/{tid}", "/api/me"),
                                headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(me, timeout=10) as reply:
        who = json.load(reply)
    with urllib.request.urlopen(url, timeout=10) as page:
        assert page.status == 200 and b"<!doctype html>" in page.read()
    plain = stammtisch(env, "tournament", "page", tid, *stranger)
    assert plain.stdout.strip() == url and "#token" not in plain.stdout
    state = json.load(urllib.request.urlopen(f"{url}/state", timeout=10))
    assert state["tournament"]["organizer_id"] == who["player_id"]


def stammtisch(env: dict[str, str], *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([STAMMTISCH, *args], env=env, capture_output=True, text=True, timeout=timeout)


def created_id(line: str) -> str:
    found = re.search(r"tournament ([0-9a-f]{32})", line)
    assert found, f"create printed no tournament id: {line!r}"
    return found.group(1)


def test_create_join_with_play_and_see_the_final_standings(cli_env: dict[str, str]) -> None:
    rounds = 3
    organizer = subprocess.Popen(
        [STAMMTISCH, "tournament", "create", "--game", "willi-stich", "--capacity", "3",
         "--rounds", str(rounds), "--table-size", "3", "--option", "start_round=19", "--start-in", "3",
         "--bots", "2", "--think", "0"], env=cli_env, stdout=subprocess.PIPE, text=True)
    assert organizer.stdout is not None
    tournament_id = created_id(organizer.stdout.readline())
    person = subprocess.run([STAMMTISCH, "play", "willi-stich", "--tournament", tournament_id,
                             "--name", "Person"], env=cli_env, input="1\n" * 2000, text=True,
                            capture_output=True, timeout=180)
    assert organizer.wait(timeout=60) == 0
    assert person.returncode == 0, person.stdout[-2000:] + person.stderr[-2000:]
    # Every round: the person's seat is announced, then they call (their first choice) at it.
    per_round = person.stdout.split("seated: round ")[1:]
    assert [part.split(",")[0] for part in per_round] == [str(n) for n in range(1, rounds + 1)]
    assert all("you: table 1 seat" in part and "· you call" in part for part in per_round)
    assert "] finished" in person.stdout and "Person" in person.stdout.rsplit("] finished", 1)[1]
    standings = stammtisch(cli_env, "tournament", "standings", tournament_id)
    assert "TOURNAMENT_STATUS_FINISHED" in standings.stdout
    assert "Person" in standings.stdout and standings.stdout.count("Bot ") == 2
    assert all(line.split()[-1] == str(rounds) for line in standings.stdout.splitlines()[2:])


def test_the_organizer_controls_it_later_from_another_shell(cli_env: dict[str, str], tmp_path: Path) -> None:
    created = stammtisch(cli_env, "tournament", "create", "--game", "willi-stich", "--capacity", "3",
                         "--rounds", "5", "--table-size", "3", "--start-in", "3600")
    assert created.returncode == 0, created.stderr
    tid = created_id(created.stdout)
    assert (Path(cli_env["XDG_CONFIG_HOME"]) / "stammtisch" / "organizer.json").exists()
    stranger = ("--device", str(tmp_path / "stranger.json"))
    refused = stammtisch(cli_env, "tournament", "start", tid, *stranger)
    assert refused.returncode == 1 and "PERMISSION_DENIED" in refused.stderr
    refused = stammtisch(cli_env, "tournament", "start", tid)
    assert refused.returncode == 1 and "FAILED_PRECONDITION" in refused.stderr  # nobody registered
    refused = stammtisch(cli_env, "tournament", "next-round", tid)
    assert refused.returncode == 1 and "FAILED_PRECONDITION" in refused.stderr  # no manual rounds
    _the_page_logs_in_its_organizer_only(cli_env, tid, stranger)
    bots = subprocess.Popen([STAMMTISCH, "tournament", "join", tid, "--bots", "3", "--think", "0.5"],
                            env=cli_env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        _wait_for_entrants(cli_env, tid, 3)
        assert "TOURNAMENT_STATUS_RUNNING" in stammtisch(cli_env, "tournament", "start", tid).stdout
        assert "TOURNAMENT_STATUS_PAUSED" in stammtisch(cli_env, "tournament", "pause", tid).stdout
        refused = stammtisch(cli_env, "tournament", "pause", tid)
        assert refused.returncode == 1 and "FAILED_PRECONDITION" in refused.stderr
        assert "TOURNAMENT_STATUS_RUNNING" in stammtisch(cli_env, "tournament", "resume", tid).stdout
        removed = stammtisch(cli_env, "tournament", "remove", tid, "Bot 2")
        assert removed.returncode == 0 and "removed Bot 2" in removed.stdout, removed.stderr
        unknown = stammtisch(cli_env, "tournament", "remove", tid, "Nobody")
        assert unknown.returncode == 1 and "no entrants" in unknown.stderr
        assert "TOURNAMENT_STATUS_CANCELLED" in stammtisch(cli_env, "tournament", "cancel", tid).stdout
        assert bots.wait(timeout=60) == 0, bots.stderr.read() if bots.stderr else ""
    finally:
        if bots.poll() is None:
            bots.kill()
            bots.wait()
    standings = stammtisch(cli_env, "tournament", "standings", tid).stdout
    assert "TOURNAMENT_STATUS_CANCELLED" in standings
    for command in (("tournament", "standings", "0" * 32), ("tournament", "watch", "0" * 32),
                    ("tournament", "pause", "x"), ("play", "willi", "--tournament", "0" * 32)):
        refused = stammtisch(cli_env, *command)
        assert refused.returncode == 1 and refused.stderr.startswith("refused: "), refused.stderr
    assert [line.split()[1:3] for line in standings.splitlines() if "(withdrawn)" in line] == [["Bot", "2"]]


def _wait_for_entrants(env: dict[str, str], tournament_id: str, count: int) -> None:
    for _ in range(100):
        lines = stammtisch(env, "tournament", "standings", tournament_id).stdout.splitlines()
        if len(lines) - 2 >= count:
            return
    raise AssertionError(f"{count} entrants did not register")

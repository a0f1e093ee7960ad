"""The TypeScript client (shared/clients/typescript) against a real stack: `stammtisch up` as a
child on free ports with two workers (so tables come with a play_port the client plays them at),
then the package's own Node tests (`npm test`) with the endpoints in the environment: once each
service's own port in plaintext (STAMMTISCH_LOBBY, ...), once through the stack's TLS door
(STAMMTISCH_DOOR + STAMMTISCH_CA). They play every catalogue game, resume a dropped stream, read
refusals from the status details, play a tournament seat and fetch a paged replay with the
default 4 MB limit."""

from __future__ import annotations

import hashlib
import os
import secrets
import shutil
import subprocess
from pathlib import Path

import pytest

from services.host.launch import LaunchedStack, launched_stack
from shared.config import SERVICE_NAMES

pytestmark = pytest.mark.integration

PACKAGE = Path(__file__).resolve().parents[2] / "shared" / "clients" / "typescript"
#: Written into node_modules by :func:`installed`: the lockfile that node_modules was made from.
STAMP = PACKAGE / "node_modules" / ".lockfile-sha256"
#: A device login's access token lives this long here, so the clients renew theirs mid-game.
TOKEN_TTL_SECONDS = 15


def _lock_digest() -> str:
    return hashlib.sha256((PACKAGE / "package-lock.json").read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def installed() -> Path:
    """The package with node_modules as its lockfile pins them (`npm ci`, only when the lockfile
    changed since the last install)."""
    if shutil.which("npm") is None:
        pytest.fail("npm is needed for the TypeScript client's tests (Node 20 and npm)")
    digest = _lock_digest()
    if not STAMP.exists() or STAMP.read_text() != digest:
        done = subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=PACKAGE,
                              capture_output=True, text=True, timeout=600, check=False)
        assert done.returncode == 0, done.stdout + done.stderr
        STAMP.write_text(digest)
    return PACKAGE


def client_env(stack: LaunchedStack, through_door: bool) -> dict[str, str]:
    """The environment contract of the Node tests: the door and its CA (TLS), or each service's
    own address (plaintext)."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("STAMMTISCH_")}
    if through_door:
        assert stack.door and stack.ca, "the stack came up without its door"
        return {**env, "STAMMTISCH_DOOR": f"grpcs://{stack.door}", "STAMMTISCH_CA": str(stack.ca)}
    return {**env, **{f"STAMMTISCH_{name.upper()}": stack.endpoints[name] for name in SERVICE_NAMES}}


@pytest.mark.timeout(1800)
@pytest.mark.parametrize("through_door", [False, True], ids=["each-service", "door"])
def test_the_typescript_client_plays_resumes_reads_refusals_and_replays(
        installed: Path, infra: tuple[str, str], tmp_path: Path, through_door: bool) -> None:
    redis_url, nats_url = infra
    overrides = {"REDIS_URL": redis_url, "NATS_URL": nats_url, "STAMMTISCH_BOT_DELAY": "0",
                 "STAMMTISCH_TOKEN_TTL": str(TOKEN_TTL_SECONDS),
                 "STAMMTISCH_TOKEN_SECRET": secrets.token_urlsafe(32)}
    with launched_stack(overrides, tmp_path / "stack", workers=2) as stack:
        done = subprocess.run(["npm", "test"], cwd=installed, env=client_env(stack, through_door),
                              capture_output=True, text=True, timeout=1500, check=False)
    assert done.returncode == 0, f"npm test failed:\n{done.stdout[-20000:]}\n{done.stderr[-5000:]}"
    assert "# fail 0" in done.stdout

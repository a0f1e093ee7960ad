"""No built-in secret: `up` makes one in its data folder and keeps it; `serve` refuses to start
without one."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import grpc
import pytest

from services.host.launch import STAMMTISCH, start_stack
from shared.api.stammtisch.v1 import lobby_pb2, lobby_pb2_grpc
from shared.infra.local import free_port
from shared.rpc.token_secret import FILE_NAME

pytestmark = pytest.mark.integration


def _login(address: str) -> str:
    with grpc.insecure_channel(address) as channel:
        return str(lobby_pb2_grpc.LobbyServiceStub(channel).Login(lobby_pb2.LoginRequest(name="Anna"),
                                                                  timeout=10).token)


def _list_tables(address: str, token: str) -> None:
    with grpc.insecure_channel(address) as channel:
        lobby_pb2_grpc.LobbyServiceStub(channel).ListTables(
            lobby_pb2.ListTablesRequest(), metadata=(("authorization", f"Bearer {token}"),), timeout=10)


def test_up_makes_a_private_secret_and_its_tokens_outlive_a_restart(
        infra: tuple[str, str], tmp_path: Path) -> None:
    redis_url, nats_url = infra
    env = {"REDIS_URL": redis_url, "NATS_URL": nats_url, "STAMMTISCH_TOKEN_SECRET": ""}
    first = start_stack(env, tmp_path)
    try:
        token = _login(first.endpoints["lobby"])
    finally:
        first.stop()
    secret_file = tmp_path / FILE_NAME
    secret = secret_file.read_text().strip()
    assert stat.S_IMODE(secret_file.stat().st_mode) == 0o600
    assert len(secret) >= 43

    second = start_stack(env, tmp_path)
    try:
        _list_tables(second.endpoints["lobby"], token)
    finally:
        second.stop()
    assert secret_file.read_text().strip() == secret, "the same secret after a restart"


@pytest.mark.parametrize(("secret", "says"), [("", "STAMMTISCH_TOKEN_SECRET is not set"),
                                              ("REPLACE-ME", "at least 32 bytes")])
def test_serve_refuses_to_start_without_a_usable_secret(tmp_path: Path, secret: str, says: str) -> None:
    env = {**os.environ, "STAMMTISCH_TOKEN_SECRET": secret, "STAMMTISCH_DATA_DIR": str(tmp_path),
           "REDIS_URL": f"redis://127.0.0.1:{free_port()}/0", "NATS_URL": f"nats://127.0.0.1:{free_port()}"}
    done = subprocess.run([STAMMTISCH, "serve", "--service", "lobby"], env=env, capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode != 0
    assert says in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / FILE_NAME).exists(), "serve never makes a secret"

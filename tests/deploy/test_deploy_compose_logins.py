"""docker-compose.yml's Redis and NATS are closed: their own commands and config, run here with
the local redis-server and nats-server on free ports, refuse a client without the password and
a wrong one, and admit the one the services are given."""

from __future__ import annotations

import asyncio
import os
import secrets
import shlex
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nats
import nats.errors
import pytest
import redis
import redis.exceptions

from shared.infra.credentials import Login, with_login
from shared.infra.local import LocalServer, binary, free_port
from tests.support.deploy import DEPLOY_DIR

pytestmark = pytest.mark.integration

#: Made for this run, as `make compose-env` makes one.
PASSWORD = secrets.token_hex(32)


def _redis_command(compose: dict[str, Any], port: int, data_dir: Path) -> list[str]:
    """The redis container's ``sh -c`` script with the image's entrypoint and paths made local."""
    script = str(compose["services"]["redis"]["command"][2]).replace("$$", "$")
    entrypoint = "exec docker-entrypoint.sh redis-server "
    assert script.startswith(entrypoint) and " --dir /data " in script
    script = script.replace(entrypoint, f"exec {shlex.quote(binary('redis-server'))} ", 1)
    script = script.replace(" --dir /data ", f" --dir {shlex.quote(str(data_dir))} --port {port} "
                                              "--bind 127.0.0.1 ", 1)
    return ["sh", "-c", script]


@pytest.fixture
def compose_redis(compose: dict[str, Any], tmp_path: Path) -> Iterator[tuple[int, dict[str, str]]]:
    """The compose Redis, as its container starts it, with REDIS_PASSWORD set; (port, its env)."""
    port = free_port()
    env = {"REDIS_PASSWORD": PASSWORD, "REDIS_FSYNC": "everysec"}
    command = ["env", *(f"{key}={value}" for key, value in env.items()),
               *_redis_command(compose, port, tmp_path)]
    server = LocalServer.launch("compose-redis", f"redis://127.0.0.1:{port}/0", command,
                                tmp_path / "redis.log")
    try:
        yield port, {**os.environ, **env}
    finally:
        server.stop()


def test_compose_redis_wants_the_password(compose_redis: tuple[int, dict[str, str]],
                                          compose: dict[str, Any]) -> None:
    port, env = compose_redis
    url = f"redis://127.0.0.1:{port}/0"
    for refused in (url, with_login(url, Login("", "wrong"))):
        with pytest.raises(redis.exceptions.AuthenticationError):
            redis.Redis.from_url(refused).ping()
    assert redis.Redis.from_url(with_login(url, Login("", PASSWORD))).ping() is True
    check = compose["services"]["redis"]["healthcheck"]["test"][1].replace("$$", "$")
    local_check = check.replace("redis-cli", f"{binary('redis-cli')} -p {port}")
    assert subprocess.run(["sh", "-c", local_check], env=env, check=False).returncode == 0
    wrong = {**env, "REDIS_PASSWORD": "wrong"}
    assert subprocess.run(["sh", "-c", local_check], env=wrong, check=False,
                          capture_output=True).returncode != 0


async def _nats_connects(url: str, login: Login | None) -> bool:
    async def quiet(_error: Exception) -> None:
        pass

    try:
        client = await nats.connect(url, allow_reconnect=False, max_reconnect_attempts=0, error_cb=quiet,
                                    user=login.username if login else None,
                                    password=login.password if login else None)
    except nats.errors.Error:
        return False
    await client.close()
    return True


def test_compose_nats_config_admits_only_the_user_of_its_environment(tmp_path: Path) -> None:
    port = free_port()
    log = tmp_path / "nats.log"
    server = LocalServer.launch("compose-nats", f"nats://127.0.0.1:{port}", [
        "env", "STAMMTISCH_NATS_USER=stammtisch", f"STAMMTISCH_NATS_PASSWORD={PASSWORD}",
        binary("nats-server"), "-c", str(DEPLOY_DIR / "nats" / "nats.conf"), "-a", "127.0.0.1",
        "-p", str(port), "-l", str(log)], log)
    try:
        url = f"nats://127.0.0.1:{port}"
        assert not asyncio.run(_nats_connects(url, None))
        assert not asyncio.run(_nats_connects(url, Login("stammtisch", "wrong")))
        assert asyncio.run(_nats_connects(url, Login("stammtisch", PASSWORD)))
    finally:
        server.stop()

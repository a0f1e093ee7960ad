"""Redis and NATS are closed: the test session's servers and those `stammtisch up` starts refuse
a client without a login and one with a wrong password, and the services work with the right
one. `up` keeps its credentials in its data folder (0600, reused across restarts), never uses
an open server, and ends with a message, not a traceback, when a configured server refuses
the configured login; `serve` does the same."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import grpc
import nats
import nats.errors
import pytest
import redis
import redis.exceptions
from grpc_health.v1 import health_pb2, health_pb2_grpc

from services.host.launch import STAMMTISCH, LaunchedStack, stack_env, start_stack
from shared.infra.credentials import (
    FILE_NAME,
    NATS_USER,
    Login,
    local_logins,
    login_of,
    with_login,
    without_login,
)
from shared.infra.local import LocalServer, binary, free_port, start_redis
from shared.infra.local_nats_cluster import local_cluster
from shared.infra.local_redis_cluster import local_redis_cluster

pytestmark = pytest.mark.integration

WRONG = "not-the-password"


def redis_refuses(url: str) -> bool:
    """The Redis at ``url`` refuses the login (or its absence) with an authentication error."""
    client = redis.Redis.from_url(url, socket_connect_timeout=2)
    try:
        client.ping()
    except redis.exceptions.AuthenticationError:
        return True
    finally:
        client.close()
    return False


def nats_refuses(url: str) -> bool:
    """The NATS at ``url`` refuses the URL's login (or its absence): Authorization Violation."""

    async def connect() -> bool:
        async def quiet(_error: Exception) -> None:
            pass

        try:
            client = await nats.connect(url, allow_reconnect=False, max_reconnect_attempts=0,
                                        error_cb=quiet)
        except nats.errors.Error as err:
            return "authorization violation" in str(err).lower()
        await client.close()
        return False

    return asyncio.run(connect())


def assert_closed(address: str, scheme: str, login: Login) -> None:
    """No login and a wrong password are refused; ``login`` is admitted."""
    refuses = redis_refuses if scheme == "redis" else nats_refuses
    bare = f"{scheme}://{address}"
    assert refuses(bare), f"{bare} admits a client without a login"
    assert refuses(with_login(bare, Login(login.username, WRONG))), f"{bare} admits a wrong password"
    assert not refuses(with_login(bare, login)), f"{bare} refuses the right login"


def _health(address: str) -> int:
    with grpc.insecure_channel(address) as channel:
        reply = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=5)
    return int(reply.status)


def _dead_urls() -> dict[str, str]:
    """REDIS_URL/NATS_URL where nothing answers: `up` starts its own servers."""
    return {"REDIS_URL": f"redis://127.0.0.1:{free_port()}/0", "NATS_URL": f"nats://127.0.0.1:{free_port()}"}


def _server_command_lines() -> list[bytes]:
    lines = []
    for entry in Path("/proc").iterdir():
        try:
            argv = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if b"redis-server" in argv or b"nats-server" in argv:
            lines.append(argv)
    return lines


def test_the_session_servers_are_closed(infra: tuple[str, str]) -> None:
    for url, scheme in zip(infra, ("redis", "nats"), strict=True):
        login = login_of(url)
        assert login is not None, "the session's URLs carry their login"
        assert_closed(url.split("@", 1)[1].split("/")[0], scheme, login)


def test_up_starts_closed_servers_with_credentials_it_keeps(tmp_path: Path) -> None:
    stack = start_stack(_dead_urls(), tmp_path)
    try:
        logins = local_logins(tmp_path)
        assert (tmp_path / FILE_NAME).stat().st_mode & 0o777 == 0o600
        for config in (tmp_path / "redis" / "redis.conf", tmp_path / "nats" / "nats.conf"):
            assert config.stat().st_mode & 0o777 == 0o600, config
        assert_closed(stack.endpoints["redis"].split("/")[0], "redis", logins.redis)
        assert_closed(stack.endpoints["nats"], "nats", logins.nats)
        assert _health(stack.endpoints["engine"]) == health_pb2.HealthCheckResponse.SERVING
        command_lines = _server_command_lines()
        assert command_lines
        for password in (logins.redis.password, logins.nats.password):
            assert not any(password.encode() in line for line in command_lines), "a password on argv"
        stored = with_login(f"redis://{stack.endpoints['redis']}", logins.redis)
        redis.Redis.from_url(stored).set("closed-test:kept", b"1")
    finally:
        err = stack.stop()
    assert stack.process.returncode == 0, err
    for password in (logins.redis.password, logins.nats.password):
        assert password not in err and password not in (tmp_path / "stdout.log").read_text()

    again = start_stack(_dead_urls(), tmp_path)  # the same data folder: the same credentials
    try:
        assert local_logins(tmp_path) == logins
        url = with_login(f"redis://{again.endpoints['redis']}", logins.redis)
        assert redis.Redis.from_url(url).get("closed-test:kept") == b"1"  # its AOF, opened again
        assert_closed(again.endpoints["nats"], "nats", logins.nats)
    finally:
        again.stop()


def test_up_uses_a_configured_server_that_admits_its_login(infra: tuple[str, str], tmp_path: Path) -> None:
    redis_url, nats_url = infra
    stack = start_stack({"REDIS_URL": redis_url, "NATS_URL": nats_url}, tmp_path)
    try:
        assert redis_url.split("@", 1)[1] == stack.endpoints["redis"]
        assert nats_url.split("@", 1)[1] == stack.endpoints["nats"]
    finally:
        err = stack.stop()
    assert "started_redis" not in err and "using_redis" in err and "using_nats" in err
    assert not (tmp_path / FILE_NAME).exists(), "no credentials made for servers it did not start"


def test_up_never_uses_an_open_server(tmp_path: Path) -> None:
    port = free_port()
    open_redis = LocalServer.launch("open-redis", f"redis://127.0.0.1:{port}/0", [
        binary("redis-server"), "--port", str(port), "--bind", "127.0.0.1", "--save", "",
        "--appendonly", "no", "--dir", str(tmp_path), "--logfile", str(tmp_path / "open.log")],
        tmp_path / "open.log")
    stack: LaunchedStack | None = None
    try:
        stack = start_stack({**_dead_urls(), "REDIS_URL": open_redis.url}, tmp_path / "stack")
        assert stack.endpoints["redis"] != f"127.0.0.1:{port}/0"
        assert_closed(stack.endpoints["redis"].split("/")[0], "redis", local_logins(tmp_path / "stack").redis)
    finally:
        err = stack.stop() if stack else ""
        open_redis.stop()
    assert '"event": "redis_not_used"' in err and "carries no credentials" in err


def _run(command: str, env: dict[str, str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """`stammtisch <command>` on free ports with ``env``, to its end."""
    args = [STAMMTISCH, *command.split()]
    return subprocess.run(args, env=stack_env(env, tmp_path), capture_output=True, text=True,
                          timeout=60, check=False)


@pytest.mark.parametrize("wrong", ["redis", "nats"])
def test_up_ends_with_a_message_when_a_configured_server_refuses_the_login(
        infra: tuple[str, str], wrong: str, tmp_path: Path) -> None:
    redis_url, nats_url = infra
    urls = {"redis": redis_url, "nats": nats_url}
    login = login_of(urls[wrong])
    assert login is not None
    urls[wrong] = with_login(urls[wrong], Login(login.username, WRONG))
    done = _run("up", {"REDIS_URL": urls["redis"], "NATS_URL": urls["nats"]}, tmp_path)
    assert done.returncode != 0
    refusal = f"{wrong.upper()}_URL {without_login(urls[wrong])} refused the configured credentials"
    assert refusal in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and WRONG not in done.stderr
    assert not (tmp_path / "redis").exists(), "no server of its own instead"


@pytest.mark.parametrize("wrong", ["redis", "nats"])
def test_serve_ends_with_a_message_when_a_server_refuses_the_login(
        infra: tuple[str, str], wrong: str, tmp_path: Path) -> None:
    redis_url, nats_url = infra
    env = {"REDIS_URL": redis_url, "NATS_URL": nats_url, "STAMMTISCH_TOKEN_SECRET": "t" * 43,
           "STAMMTISCH_REDIS_PASSWORD" if wrong == "redis" else "STAMMTISCH_NATS_PASSWORD": WRONG}
    if wrong == "nats":
        env["STAMMTISCH_NATS_USER"] = NATS_USER
    done = _run("serve --service lobby", env, tmp_path)
    assert done.returncode != 0
    assert f"{'Redis' if wrong == 'redis' else 'NATS'} at " in done.stderr
    assert "refused the login" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and WRONG not in done.stderr


def test_a_redis_acl_user_is_the_only_login(tmp_path: Path) -> None:
    """With a user name, the Redis `start_redis` starts admits that ACL user and not its default user."""
    login = Login.fresh("app")
    server = start_redis(free_port(), tmp_path, login)
    try:
        address = server.url.split("@", 1)[1].split("/")[0]
        assert_closed(address, "redis", login)
        assert redis_refuses(with_login(f"redis://{address}", Login("", login.password)))
    finally:
        server.stop()


def test_the_local_clusters_are_closed(tmp_path: Path) -> None:
    with local_redis_cluster(tmp_path / "redis", masters=3) as redis_cluster:
        for node in redis_cluster.nodes:
            assert_closed(node.address, "redis", redis_cluster.login)
        assert redis_cluster.masters(), "redis-cli reaches the nodes with the login"
    with local_cluster(tmp_path / "nats") as nats_cluster:
        for node in nats_cluster.nodes:
            assert_closed(node.address.split("//")[1], "nats", nats_cluster.login)
        assert "route" not in nats_cluster.url and nats_cluster.route_login.password not in nats_cluster.url

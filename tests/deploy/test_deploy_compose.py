"""docker-compose.yml: Redis, NATS and every service, their health checks, ports and environment."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
from typing import Any

import pytest

from shared.config import DEFAULT_PORTS, SERVICE_NAMES
from shared.infra.credentials import Login, login_of
from tests.support.deploy import COMPOSE_PATH, REPO_ROOT, load_yaml, settings_from

REQUIRED_SERVICES = {"redis", "nats", *SERVICE_NAMES}
#: Host ports for the services' /metrics (each container listens on its metrics port).
METRICS_HOST_PORTS = {9101, 9102, 9103, 9104, 9105}

_INTERPOLATION = re.compile(r"\$\{(?P<name>[A-Z0-9_]+)(?::-(?P<default>[^}]*)|:\?(?P<error>[^}]*))?\}")
#: What the caller's environment gives the variables compose requires (`${VAR:?message}`).
REQUIRED_FROM_CALLER = {"STAMMTISCH_TOKEN_SECRET": "x" * 43, "STAMMTISCH_REDIS_PASSWORD": "r" * 32,
                        "STAMMTISCH_NATS_PASSWORD": "n" * 32}
#: The variables that hold a credential: each comes from the caller, none has a default.
CREDENTIALS = ("STAMMTISCH_TOKEN_SECRET", "STAMMTISCH_REDIS_PASSWORD", "STAMMTISCH_NATS_PASSWORD")


def _interpolate(value: object) -> str:
    """Compose-style `${VAR:-default}` with an environment that sets only the required variables."""
    return _INTERPOLATION.sub(
        lambda m: REQUIRED_FROM_CALLER[m.group("name")] if m.group("error") is not None
        else m.group("default") or "", str(value))


def _environment(service: dict[str, Any]) -> dict[str, str]:
    env = service["environment"]
    assert isinstance(env, dict), "use the mapping form of `environment`"
    return {key: _interpolate(value) for key, value in env.items()}


def _ports(service: dict[str, Any]) -> list[tuple[str | None, int, int]]:
    """Short-syntax port mappings as (host ip or None, published, target)."""
    out = []
    for spec in service.get("ports", []):
        assert isinstance(spec, str), "use the short string syntax for ports"
        parts = spec.split("/")[0].rsplit(":", 2)
        assert len(parts) >= 2, f"publish an explicit host port: {spec}"
        host_ip = parts[0] if len(parts) == 3 else None
        out.append((host_ip, int(parts[-2]), int(parts[-1])))
    return out


def test_defines_every_service_with_a_health_check(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert set(services) >= REQUIRED_SERVICES
    for name in REQUIRED_SERVICES:
        check = services[name]["healthcheck"]
        assert not check.get("disable", False), name
        assert check["test"][0] in ("CMD", "CMD-SHELL"), name
        assert len(check["test"]) > 1, name


def test_serves_exactly_the_services_of_the_one_list(compose: dict[str, Any]) -> None:
    """Every `stammtisch serve` container is a service of shared.config.SERVICE_NAMES, and each has one."""
    served = [name for name, spec in compose["services"].items()
              if (spec.get("command") or [None])[0] == "serve"]
    assert sorted(served) == sorted(SERVICE_NAMES)


def _redis_script(compose: dict[str, Any]) -> str:
    """The shell script the redis container runs (``sh -c <script>``), as compose passes it."""
    command = compose["services"]["redis"]["command"]
    assert command[:2] == ["sh", "-c"] and len(command) == 3
    return str(command[2]).replace("$$", "$")


def test_redis_and_nats(compose: dict[str, Any]) -> None:
    redis = compose["services"]["redis"]
    assert redis["image"].startswith("redis:7")
    script = _redis_script(compose)
    # The image's entrypoint runs redis-server as user redis; the config comes on stdin: "-", last,
    # because the entrypoint may put options first and redis-server reads "-" only first or last.
    command = shlex.split(script.splitlines()[0].split("<<")[0])
    assert command[:3] == ["exec", "docker-entrypoint.sh", "redis-server"] and command[-1] == "-"
    assert command[command.index("--save") + 1] == "", "the AOF is enough, no snapshots"
    assert command[command.index("--appendonly") + 1] == "yes"
    assert command[command.index("--appendfsync") + 1] == "$REDIS_FSYNC"
    assert redis["environment"]["REDIS_FSYNC"] == "${STAMMTISCH_REDIS_FSYNC:-everysec}"
    data = command[command.index("--dir") + 1]
    volumes = {spec.split(":")[1]: spec.split(":")[0] for spec in redis["volumes"]}
    assert volumes[data] in compose["volumes"], "the AOF lives in a named volume"

    nats = compose["services"]["nats"]
    major, minor = (int(part) for part in re.findall(r"nats:(\d+)\.(\d+)", nats["image"])[0])
    assert (major, minor) >= (2, 10)
    command = nats["command"]
    assert "-js" in command
    store = command[command.index("-sd") + 1]
    volumes = {spec.split(":")[1]: spec.split(":")[0] for spec in nats["volumes"]}
    assert volumes[store] in compose["volumes"], "JetStream store is a named volume"


def test_redis_and_nats_are_closed_by_the_callers_passwords(compose: dict[str, Any]) -> None:
    """Redis gets `requirepass` from its environment (on stdin, not a command line), NATS the
    config deploy/nats/nats.conf whose user it reads from its environment; both values come from
    the caller's required variables, and the health check authenticates."""
    redis = compose["services"]["redis"]
    assert redis["environment"]["REDIS_PASSWORD"].startswith("${STAMMTISCH_REDIS_PASSWORD:?")
    script = _redis_script(compose)
    assert script.splitlines()[1:] == ["requirepass $REDIS_PASSWORD", "EOF"]
    assert "<<EOF" in script.splitlines()[0] and "--requirepass" not in script
    assert "REDISCLI_AUTH" in redis["healthcheck"]["test"][1]

    nats = compose["services"]["nats"]
    command = nats["command"]
    config = command[command.index("-c") + 1]
    mounts = {spec.split(":")[1]: spec.split(":")[0] for spec in nats["volumes"]}
    assert mounts[config] == "./deploy/nats/nats.conf"
    text = (REPO_ROOT / "deploy" / "nats" / "nats.conf").read_text()
    assert "user: $STAMMTISCH_NATS_USER, password: $STAMMTISCH_NATS_PASSWORD" in text
    assert nats["environment"]["STAMMTISCH_NATS_PASSWORD"].startswith("${STAMMTISCH_NATS_PASSWORD:?")
    assert nats["environment"]["STAMMTISCH_NATS_USER"] == "${STAMMTISCH_NATS_USER:-stammtisch}"


def test_every_credential_comes_from_the_caller_without_a_default() -> None:
    """No credential is written in docker-compose.yml: each is `${VAR:?message}`."""
    text = COMPOSE_PATH.read_text()
    for name in CREDENTIALS:
        uses = re.findall(rf"\$\{{{name}(?::[-?][^}}]*)?\}}", text)
        assert uses, name
        assert all(use.startswith(f"${{{name}:?") for use in uses), uses


@pytest.mark.parametrize("service", SERVICE_NAMES)
def test_stammtisch_service(
    service: str, compose: dict[str, Any], known_env_vars: set[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    spec = compose["services"][service]
    assert spec["build"] == {"context": ".", "dockerfile": "deploy/Dockerfile"}
    assert spec["command"] == ["serve", "--service", service]
    assert spec["healthcheck"]["test"] == ["CMD", "stammtisch", "healthcheck", "--service", service]
    for dependency in ("redis", "nats"):
        assert spec["depends_on"][dependency] == {"condition": "service_healthy"}

    env = _environment(spec)
    assert set(env) <= known_env_vars, set(env) - known_env_vars
    assert env["STAMMTISCH_BIND"] == "0.0.0.0"
    assert {f"STAMMTISCH_{name.upper()}_PORT" for name in SERVICE_NAMES} <= set(env)
    assert env["REDIS_URL"].startswith("redis://redis:")
    assert env["NATS_URL"].startswith("nats://nats:")
    # One secret for all, from the caller's environment, with no default: compose refuses to start
    # without it. The previous secret (rotation) is optional.
    for credential in CREDENTIALS:
        secret = _INTERPOLATION.fullmatch(spec["environment"][credential])
        assert secret and secret["name"] == credential and secret["error"], "use ${VAR:?message}"
    assert spec["environment"]["STAMMTISCH_NATS_USER"] == "${STAMMTISCH_NATS_USER:-stammtisch}"
    assert spec["environment"]["STAMMTISCH_TOKEN_SECRET_PREVIOUS"] == "${STAMMTISCH_TOKEN_SECRET_PREVIOUS:-}"

    settings = settings_from(env, monkeypatch)
    assert settings.ports[service] == DEFAULT_PORTS[service]
    given = REQUIRED_FROM_CALLER
    assert login_of(settings.redis_url) == Login("", given["STAMMTISCH_REDIS_PASSWORD"])
    assert login_of(settings.nats_url) == Login("stammtisch", given["STAMMTISCH_NATS_PASSWORD"])
    ports = _ports(spec)
    grpc = [(published, target) for _, published, target in ports
            if target == settings.ports[service]]
    assert grpc == [(DEFAULT_PORTS[service], DEFAULT_PORTS[service])]
    metrics = [published for _, published, target in ports if target == settings.metrics_port]
    assert len(metrics) == 1
    assert metrics[0] in METRICS_HOST_PORTS
    page = [(published, target) for _, published, target in ports if target == settings.tournament_page_port]
    assert page == ([(settings.tournament_page_port,) * 2] if service == "tournament" else [])
    assert len(ports) == 2 + len(page)


def test_metrics_host_ports_are_distinct(compose: dict[str, Any]) -> None:
    published = [
        published
        for service in SERVICE_NAMES
        for _, published, _target in _ports(compose["services"][service])
        if published in METRICS_HOST_PORTS
    ]
    assert sorted(published) == sorted(METRICS_HOST_PORTS)


def test_no_host_port_is_published_twice(compose: dict[str, Any]) -> None:
    published = [
        (host_ip or "0.0.0.0", port)
        for service in compose["services"].values()
        for host_ip, port, _target in _ports(service)
    ]
    assert len(published) == len(set(published))


def test_prometheus_uses_the_deploy_config(compose: dict[str, Any]) -> None:
    prometheus = compose["services"].get("prometheus")
    if prometheus is None:
        pytest.skip("no prometheus service in docker-compose.yml")
    assert "./deploy/prometheus:/etc/prometheus:ro" in prometheus["volumes"]
    assert "--config.file=/etc/prometheus/prometheus.yml" in prometheus["command"]


def test_grafana_provisioning_finds_the_dashboard(compose: dict[str, Any]) -> None:
    grafana = compose["services"].get("grafana")
    if grafana is None:
        pytest.skip("no grafana service in docker-compose.yml")
    mounts = dict(spec.rsplit(":", 2)[:2] for spec in grafana["volumes"])
    provider = load_yaml(
        REPO_ROOT / "deploy" / "grafana" / "provisioning" / "dashboards" / "stammtisch.yml")
    (path,) = (p["options"]["path"] for p in provider["providers"])
    assert mounts["./deploy/grafana"] == path
    assert (REPO_ROOT / "deploy" / "grafana" / "stammtisch-dashboard.json").is_file()
    datasources = load_yaml(
        REPO_ROOT / "deploy" / "grafana" / "provisioning" / "datasources" / "prometheus.yml")
    assert [d["type"] for d in datasources["datasources"]] == ["prometheus"]


def _docker_compose_v2() -> bool:
    if shutil.which("docker") is None:
        return False
    probe = subprocess.run(["docker", "compose", "version"], capture_output=True, check=False)
    return probe.returncode == 0


@pytest.mark.skipif(not _docker_compose_v2(), reason="docker compose v2 not installed")
def test_docker_compose_config() -> None:
    """`docker compose config` parses and validates the file (no engine needed)."""
    result = subprocess.run(
        ["docker", "compose", "-f", str(COMPOSE_PATH), "--profile", "observability",
         "config", "--quiet"],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=120, check=False,
    )
    assert result.returncode == 0, result.stderr

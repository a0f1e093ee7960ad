"""The door's nginx.conf as services/host/door.py renders it from the settings (checked by nginx -t)."""

from __future__ import annotations

import dataclasses
import re
import subprocess
from pathlib import Path

import pytest

from services.host.door import nginx_binary, render_config
from shared.config import DEFAULT_PORTS, Settings
from shared.rpc.tls import development_certificates


def _settings(tmp_path: Path, **changes: object) -> Settings:
    files = development_certificates(tmp_path / "tls", ["127.0.0.1"])
    return dataclasses.replace(Settings(), door_port=18443, tls_cert=str(files.cert), tls_key=str(files.key),
                               tls_ca=str(files.ca), **changes)  # type: ignore[arg-type]


def _upstream(config: str, name: str) -> str:
    found = re.search(rf"upstream {name} \{{(.*?)\}}", config, re.S)
    assert found is not None, name
    return found.group(1)


def test_with_several_workers_a_table_services_calls_spread_by_table_over_their_own_ports(
        tmp_path: Path) -> None:
    settings = _settings(tmp_path, table_ports={"engine": (7001, 7003), "arbiter": (7000, 7002)})
    config = render_config(settings, DEFAULT_PORTS, tmp_path / "door")
    engine = _upstream(config, "engine")
    assert "hash $http_x_stammtisch_table consistent;" in engine
    assert re.findall(r"server 127\.0\.0\.1:(\d+)", engine) == ["7001", "7003"]
    lobby = _upstream(config, "lobby")
    assert "hash" not in lobby and re.findall(r"server 127\.0\.0\.1:(\d+)", lobby) == ["50051"]
    routes = {"stammtisch.v1.AccountService": "lobby", "stammtisch.v1.EngineService": "engine",
              "grpc.health.v1.Health": "lobby", "stammtisch.v1.TournamentService": "tournament"}
    for path, upstream in routes.items():
        assert f"location /{path}/ {{\n            grpc_pass grpc://{upstream};" in config, path


def test_one_process_its_service_ports_and_the_services_own_tls(tmp_path: Path) -> None:
    config = render_config(_settings(tmp_path, service_tls=True), DEFAULT_PORTS, tmp_path / "door")
    assert re.findall(r"server 127\.0\.0\.1:(\d+)", _upstream(config, "engine")) == ["50052"]
    assert "grpc_pass grpcs://engine;" in config and "grpc_ssl_name localhost;" in config


@pytest.mark.integration
def test_nginx_accepts_the_rendered_configuration(tmp_path: Path) -> None:
    state = tmp_path / "door"
    (state / "tmp").mkdir(parents=True)
    conf = state / "nginx.conf"
    conf.write_text(render_config(_settings(tmp_path), DEFAULT_PORTS, state))
    command = [nginx_binary(), "-t", "-p", str(state), "-c", str(conf), "-e", str(state / "e.log")]
    checked = subprocess.run(command, capture_output=True, text=True, timeout=30)
    assert checked.returncode == 0, checked.stderr

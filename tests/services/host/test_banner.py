"""`stammtisch up`'s banner lines up its addresses, whatever the longest service name
(it printed "tournament grpc://..." one column off the others)."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from services.host.door import Door
from services.host.up import print_banner
from shared.config import SERVICE_NAMES, Settings


def test_every_address_starts_in_one_column(capsys: pytest.CaptureFixture[str]) -> None:
    services = [(name, 50051 + index, f"stammtisch.v1.{name}") for index, name in enumerate(SERVICE_NAMES)]
    workers = [{"pid": 10 + n, "metrics_port": 9100 + n, "services": services} for n in range(2)]
    print_banner(Settings.from_env(), workers)  # type: ignore[arg-type]
    columns = {match.start(1) for line in capsys.readouterr().out.splitlines()
               if (match := re.match(r"  \S+\s+((?:grpc|http|redis|nats)://)", line))}
    assert len(columns) == 1, columns


def test_the_door_and_its_ca_come_first(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Exactly `door grpcs://HOST:PORT` and `ca PATH` on the first two lines (launch.py and the
    docs rely on them), then the rest as before."""
    settings = dataclasses.replace(Settings.from_env(), bind_host="0.0.0.0", door_port=8443,
                                   tls_ca=str(tmp_path / "ca.crt"))
    services = [(name, 50051 + index, f"stammtisch.v1.{name}") for index, name in enumerate(SERVICE_NAMES)]
    worker = {"pid": 10, "metrics_port": 9100, "services": services}
    print_banner(settings, [worker], Door(settings, tmp_path))
    lines = capsys.readouterr().out.splitlines()
    assert lines[:2] == ["door grpcs://127.0.0.1:8443", f"ca {tmp_path / 'ca.crt'}"]
    assert lines[2].startswith("Stammtisch is up (1 worker, pid 10)")

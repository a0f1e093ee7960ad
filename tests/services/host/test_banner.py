"""`stammtisch up`'s banner lines up its addresses, whatever the longest service name
(it printed "tournament grpc://..." one column off the others)."""

from __future__ import annotations

import re

import pytest

from services.host.up import print_banner
from shared.config import SERVICE_NAMES, Settings


def test_every_address_starts_in_one_column(capsys: pytest.CaptureFixture[str]) -> None:
    services = [(name, 50051 + index, f"stammtisch.v1.{name}") for index, name in enumerate(SERVICE_NAMES)]
    workers = [{"pid": 10 + n, "metrics_port": 9100 + n, "services": services} for n in range(2)]
    print_banner(Settings.from_env(), workers)  # type: ignore[arg-type]
    columns = {match.start(1) for line in capsys.readouterr().out.splitlines()
               if (match := re.match(r"  \S+\s+((?:grpc|http|redis|nats)://)", line))}
    assert len(columns) == 1, columns

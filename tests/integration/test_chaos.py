"""The chaos test, small: SIGKILLs of every kind of process under tables of every game.

`make chaos` runs the same harness bigger (services/chaos/run.py); this one
keeps it to about ten kills and a handful of tables so the default suite
stays quick, and asserts every check the harness makes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from services.chaos.players import TABLES
from services.chaos.run import chaos
from services.chaos.schedule import KINDS

pytestmark = [pytest.mark.integration, pytest.mark.timeout(420)]


async def test_kills_of_every_kind_lose_no_acknowledged_action(tmp_path: Path) -> None:
    report = await chaos(tmp_path / "chaos", kills=10, seed=7, tables=4, slots=4, interval=3.0)
    print("\n".join(report.lines()))
    assert set(report.kills.by_kind) == set(KINDS)
    assert {run.game for run in report.ledger.tables.values()} == set(TABLES)
    assert report.ledger.acknowledged
    problems = report.problems()
    assert not problems, "\n".join(problems)

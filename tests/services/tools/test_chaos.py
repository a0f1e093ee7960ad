"""The chaos test, small: SIGKILLs of every kind of process under tables of every game.

`make chaos` runs the same harness bigger (services/tools/chaos/run.py); this one
keeps it to about ten kills and a handful of tables so the default suite
stays quick, and asserts every check the harness makes.
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from services.host.runner import running_services
from services.tools.chaos.checks import Findings, check_logs
from services.tools.chaos.players import TABLES, Acknowledged, Ledger, SeatBot, TableRun
from services.tools.chaos.run import chaos
from services.tools.chaos.schedule import KINDS
from shared.config import Settings
from shared.games.registry import bot_levels
from shared.sdk.client import Endpoints, StammtischClient, Update

pytestmark = pytest.mark.integration


@pytest.mark.timeout(420)
async def test_kills_of_every_kind_lose_no_acknowledged_action(tmp_path: Path) -> None:
    report = await chaos(tmp_path / "chaos", kills=10, seed=7, tables=4, slots=4, interval=3.0)
    print("\n".join(report.lines()))
    assert set(report.kills.by_kind) == set(KINDS)
    assert {run.game for run in report.ledger.tables.values()} == set(TABLES)
    assert report.ledger.acknowledged
    problems = report.problems()
    assert not problems, "\n".join(problems)


def _endpoints(stack: dict[str, str], engine: str = "") -> Endpoints:
    return Endpoints(stack["lobby"], engine or stack["engine"], stack["arbiter"], stack["scoring"])


async def _willi_table(endpoints: Endpoints) -> tuple[Ledger, list[StammtischClient]]:
    """Three clients at a started Willi table, with the chaos run's ledger of it."""
    clients = [StammtischClient(endpoints) for _ in range(3)]
    for index, client in enumerate(clients):
        await client.login(f"checked{index}")
    table = await clients[0].create_table("willi", 3, join=True, turn_seconds=0)
    for seat, client in enumerate(clients[1:], 1):
        await client.join(table.table_id, seat=seat)
    for client in clients:
        await client.ready(table.table_id)
    await clients[0].wait_for_game(table.table_id)
    return Ledger(tables={table.table_id: TableRun(table.table_id, "willi",
                                                   [c.player_id for c in clients])}), clients


async def _acknowledge(ledger: Ledger, clients: list[StammtischClient], count: int) -> None:
    """Play ``count`` more actions with the heuristic bot's choices, each recorded as acknowledged."""
    (table_id,) = ledger.tables
    bot, rng = bot_levels("willi")["heuristic"](), random.Random(len(ledger.acknowledged))
    goal = len(ledger.acknowledged) + count
    while len(ledger.acknowledged) < goal:
        for seat, client in enumerate(clients):
            view = (await client.view(table_id)).view
            if view["legal"]:
                action, action_id = bot.choose(view, rng), uuid.uuid4().hex
                update = await client.act(table_id, action, action_id)
                ledger.acknowledged.append(Acknowledged(table_id, client.player_id, seat,
                                                        action_id, update.seq, action))
                break


async def test_the_checks_find_a_lost_and_a_duplicated_action(stack: dict[str, str],
                                                              settings: Settings) -> None:
    ledger, clients = await _willi_table(_endpoints(stack))
    try:
        await _acknowledge(ledger, clients, 3)
        honest = Findings()
        await check_logs(settings, ledger, honest)
        assert (honest.lost, honest.duplicated, honest.log_holes) == ([], [], [])

        first, second, third = ledger.acknowledged
        # A commit no acknowledged action id accounts for: applied twice, as the checks see it.
        ledger.acknowledged = [first, third]
        doubled = Findings()
        await check_logs(settings, ledger, doubled)
        assert len(doubled.duplicated) == 1 and f"seq {second.seq}" in doubled.duplicated[0]

        # A client told a seq where its action is not: lost.
        ledger.acknowledged = [dataclasses.replace(first, seq=second.seq), second, third]
        lost = Findings()
        await check_logs(settings, ledger, lost)
        assert len(lost.lost) == 2  # the stored answer differs, and seq 2 was claimed twice
    finally:
        await asyncio.gather(*(c.close() for c in clients))


class _SkippingStream:
    """Stands in for the SDK client's stream: it skips seq 4 and repeats seq 5."""

    async def updates(self, table_id: str, after_seq: int) -> AsyncIterator[Update]:
        for seq in (2, 3, 5, 5, 6):
            yield Update(table_id, seq, [], {"over": seq == 6}, 0)


async def test_the_stream_check_finds_a_gap_and_a_duplicate() -> None:
    ledger = Ledger()
    follower = SeatBot(ledger, _SkippingStream(), "t1", 0, "willi", random.Random(1), 0.0)  # type: ignore[arg-type]
    await follower._follow(1)
    assert ledger.stream_faults == ["t1 seat 0: gap: seq 5 after 3", "t1 seat 0: duplicate: seq 5 after 5"]


async def test_a_client_of_two_engine_replicas_goes_on_when_one_stops(stack: dict[str, str],
                                                                    settings: Settings) -> None:
    async with running_services(settings, ["engine"]) as running:
        replicas = f"{stack['engine']},127.0.0.1:{running[0].port}"
        ledger, clients = await _willi_table(_endpoints(stack, engine=replicas))
        await _acknowledge(ledger, clients, 6)
    try:
        await _acknowledge(ledger, clients, 6)  # the second replica is gone: all go to the first
        findings = Findings()
        await check_logs(settings, ledger, findings)
        assert (findings.lost, findings.duplicated) == ([], [])
    finally:
        await asyncio.gather(*(c.close() for c in clients))

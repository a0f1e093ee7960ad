"""Which worker holds a table (shared/tables/placement.py): stable, spread, and off with one process."""

from __future__ import annotations

import dataclasses
import uuid

from services.host.workers import shared_ports
from shared.config import Settings
from shared.tables.placement import TABLE_SERVICES, own_port, play_port

TWO_WORKERS = Settings(table_ports={"engine": (41001, 41002), "arbiter": (42001, 42002)})


def test_one_process_places_no_table() -> None:
    assert play_port(Settings(), "willi", "abc") == 0
    assert own_port(Settings(), "engine") == 0


def test_a_table_is_played_on_its_games_service_at_one_workers_port() -> None:
    table_id = uuid.uuid4().hex
    assert play_port(TWO_WORKERS, "willi", table_id) in (41001, 41002)
    assert play_port(TWO_WORKERS, "wie-waldi", table_id) in (42001, 42002)
    # the same in every process: no per-process hash seed
    assert {play_port(TWO_WORKERS, "willi", table_id) for _ in range(3)} == {play_port(
        dataclasses.replace(TWO_WORKERS, worker_slot=1), "willi", table_id)}


def test_tables_are_spread_over_the_workers() -> None:
    ports = [play_port(TWO_WORKERS, "willi", uuid.uuid4().hex) for _ in range(400)]
    assert 120 < ports.count(41001) < 280


def test_each_worker_knows_its_own_ports() -> None:
    assert own_port(dataclasses.replace(TWO_WORKERS, worker_slot=1), "arbiter") == 42002
    settings, metrics = shared_ports(Settings(), 3)
    assert settings.share_ports and len(metrics) == 3
    assert set(settings.table_ports) == set(TABLE_SERVICES)
    ports = [port for each in settings.table_ports.values() for port in each]
    assert len(ports) == 3 * len(TABLE_SERVICES) == len(set(ports))


def test_the_workers_own_ports_can_be_fixed_for_a_firewall() -> None:
    settings, _metrics = shared_ports(Settings(table_port_base=47000), 2)
    assert settings.table_ports == {"arbiter": (47000, 47002), "engine": (47001, 47003)}

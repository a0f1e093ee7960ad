"""The dashboard and the alerts on a real Prometheus that scrapes a running stack under bot load.

Each service runs as its own `stammtisch serve` process (one scrape target per
`component`, as in compose and Kubernetes). Prometheus runs the shipped scrape
config (targets moved to this run's ports, a 1 s interval) and the shipped
alerts.yml. Bot clients play every game through the real API: the turn-based
games as `stammtisch loadtest` plays them (quick match, whole games), Wie Waldi
as `make bench` does (bots that follow their streams). Meanwhile every
dashboard query must return series and every alert must be healthy and quiet
(the two latency alerts only not firing); then one service is killed and its
"down" alerts must go pending.
"""

from __future__ import annotations

import asyncio
import random
import re
import shutil
import signal
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from services.tools.perf.arbiter import GAME as WALDI
from services.tools.perf.arbiter import SEATS as WALDI_SEATS
from services.tools.perf.arbiter import BotSeat, play_table, seat_players
from services.tools.perf.bench import STACK_ENV
from services.tools.perf.loadtest import SEATS, Tournament
from shared.config import SERVICE_NAMES
from shared.sdk.client import Endpoints, StammtischClient
from tests.support.deploy import PROMETHEUS_DIR, dashboard_panels, load_yaml
from tests.support.prometheus import PrometheusAPI, start_prometheus
from tests.support.service_processes import service_processes

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(shutil.which("prometheus") is None, reason="prometheus not installed"),
]

#: What Grafana's $__rate_interval comes to with a 1 s scrape interval: several scrapes.
RATE_INTERVAL = "20s"
#: The service whose process is killed to see its "down" alerts go pending.
KILLED = "arbiter"
DOWN_ALERTS = {"StammtischTargetDown", "StammtischComponentDown"}
#: Thresholds on speed: on a busy test machine they may go pending (never firing within
#: their `for:`), so they are only required not to fire; speed is not asserted in tests.
LATENCY_ALERTS = {"StammtischRpcLatencyP99High", "StammtischEventLagHigh"}


def _scrape_config(metrics_ports: dict[str, int], rules: Path) -> dict[str, Any]:
    """The shipped compose config with this run's targets, a 1 s cadence and absolute rule paths."""
    config = load_yaml(PROMETHEUS_DIR / "prometheus.yml")
    config["global"].update(scrape_interval="1s", evaluation_interval="1s", scrape_timeout="1s")
    config["rule_files"] = [str(rules)]
    (job,) = [job for job in config["scrape_configs"] if job["job_name"] == "stammtisch"]
    for group in job["static_configs"]:
        group["targets"] = [f"127.0.0.1:{metrics_ports[group['labels']['component']]}"]
    config["scrape_configs"] = [job]
    return config


def _regex_of(values: list[str]) -> str:
    """A multi-value template variable as Grafana writes it into a regex matcher."""
    return "(" + "|".join(re.escape(value).replace("\\", "\\\\") for value in values) + ")"


def _panel_queries(dashboard: dict[str, Any], api: PrometheusAPI) -> list[tuple[str, str]]:
    """(panel title, PromQL) with every template variable set to the values it lists now."""
    values = {"__rate_interval": RATE_INTERVAL}
    for variable in dashboard["templating"]["list"]:
        if variable["type"] == "query":
            metric, label = re.fullmatch(r"label_values\((\w+), (\w+)\)",
                                         variable["query"]["query"]).groups()  # type: ignore[union-attr]
            listed = api.label_values(label, metric)
            assert listed, f"template variable ${variable['name']} lists nothing"
            values[variable["name"]] = _regex_of(listed)
    return [
        (panel["title"] + (f" [{target['refId']}]" if len(panel["targets"]) > 1 else ""),
         re.sub(r"\$(\w+)", lambda m: values[m.group(1)], target["expr"]))
        for panel in dashboard_panels(dashboard) if panel["type"] != "row"
        for target in panel["targets"]
    ]


async def _waldi_table(endpoints: Endpoints) -> int:
    """One Wie Waldi table of bot clients that follow their streams (as `make bench` plays)."""
    clients = [StammtischClient(endpoints) for _ in range(WALDI_SEATS)]
    try:
        await asyncio.gather(*(client.login(f"waldi-{i}") for i, client in enumerate(clients)))
        table_id = await seat_players(clients)
        seats = [BotSeat(client, table_id, seat, random.Random(seat))
                 for seat, client in enumerate(clients)]
        await play_table(seats, seconds=90)
        return int(seats[0].latest is not None and bool(seats[0].latest.view.get("over")))
    finally:
        await asyncio.gather(*(client.close() for client in clients))


async def _quick_match_table(endpoints: Endpoints, game: str) -> int:
    """One table of `stammtisch loadtest`'s tournament: quick match, then a whole game."""
    load = Tournament(endpoints, game, tables=1)
    await load.run(seconds=90)
    assert not load.failures, load.failures
    return len(load.games.values) // SEATS[game]


async def _load(endpoints: Endpoints, stop: asyncio.Event) -> dict[str, int]:
    """Every game, one table at a time each, all games at once, until stopped; games finished."""

    async def games_of(game: str) -> int:
        finished = 0
        while not stop.is_set():
            finished += await (_waldi_table(endpoints) if game == WALDI
                               else _quick_match_table(endpoints, game))
        return finished

    counts = await asyncio.gather(*(games_of(game) for game in SEATS))
    return dict(zip(SEATS, counts, strict=True))


async def _until(what: str, probe: Callable[[], bool], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not probe():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.5)


def _games_scored(api: PrometheusAPI) -> bool:
    """Every game has applied actions and scoring has recorded a result of each."""
    games = api.query('count(count by (game) (stammtisch_actions_total{outcome="applied"}))')
    recorded = api.query('sum(stammtisch_results_consumed_total{outcome="recorded"})')
    return (bool(games) and float(games[0]["value"][1]) == len(SEATS)
            and bool(recorded) and float(recorded[0]["value"][1]) >= len(SEATS))


def _evaluated_since(api: PrometheusAPI, moment: float) -> bool:
    rules = api.alert_rules()
    return bool(rules) and all(
        rule["lastEvaluation"] and _timestamp(rule["lastEvaluation"]) > moment for rule in rules)


def _timestamp(rfc3339: str) -> float:
    return datetime.fromisoformat(rfc3339.replace("Z", "+00:00")).timestamp()


async def test_dashboard_and_alerts_on_a_real_prometheus(
        infra: tuple[str, str], tmp_path: Path, dashboard: dict[str, Any],
        alert_rules: list[dict[str, Any]]) -> None:
    redis_url, nats_url = infra
    env = {**STACK_ENV, "REDIS_URL": redis_url, "NATS_URL": nats_url}
    with service_processes(env, tmp_path / "services") as stack:
        config = tmp_path / "prometheus.yml"
        config.write_text(yaml.safe_dump(_scrape_config(stack.metrics_ports,
                                                        PROMETHEUS_DIR / "alerts.yml")))
        prometheus = start_prometheus(config, tmp_path / "prometheus")
        try:
            api = PrometheusAPI(prometheus.url)
            await _until("every target up", lambda: len(api.query('up{job="stammtisch"} == 1'))
                         == len(SERVICE_NAMES))
            stop = asyncio.Event()
            load = asyncio.create_task(_load(stack.endpoints, stop))
            try:
                await _until("a scored game of every game", lambda: _games_scored(api), 120)
                started = time.time()
                await _until("a rule evaluation under load", lambda: _evaluated_since(api, started))

                print(f"\n{'dashboard panel':<45} series")
                empty = []
                for title, expr in _panel_queries(dashboard, api):
                    series = api.query(expr)
                    print(f"{title:<45} {len(series)}")
                    if not series:
                        empty.append(f"{title}: {expr}")

                loaded = api.alert_rules()
                unhealthy = [(r["name"], r["health"], r.get("lastError")) for r in loaded
                             if r["health"] != "ok"]
                answering = {rule["alert"]: len(api.query(rule["expr"])) for rule in alert_rules}
                for rule in loaded:
                    print(f"alert {rule['name']:<40} {rule['health']} {rule['state']}, "
                          f"{answering[rule['name']]} series")
            finally:
                stop.set()
                finished = await asyncio.wait_for(load, 120)
            print(f"games finished under load: {finished}")
            assert not empty, "panels without series under load:\n" + "\n".join(empty)
            assert sorted(r["name"] for r in loaded) == sorted(r["alert"] for r in alert_rules)
            assert not unhealthy, unhealthy
            assert not [r["name"] for r in loaded if r["state"] == "firing"]
            noisy = [r["name"] for r in loaded if r["name"] not in LATENCY_ALERTS
                     and (r["state"] != "inactive" or answering[r["name"]])]
            assert not noisy, f"alerts not quiet under normal load: {noisy}"

            stack.processes[KILLED].process.send_signal(signal.SIGKILL)
            stack.processes[KILLED].process.wait()

            def down_pending() -> bool:
                return {a["labels"]["alertname"] for a in api.alerts()
                        if a["state"] == "pending" and a["labels"].get("component") == KILLED
                        } == DOWN_ALERTS

            await _until(f"the {KILLED} down alerts pending", down_pending, 30)
            active = {(a["labels"]["alertname"], a["labels"].get("component"), a["state"])
                      for a in api.alerts()}
            print(f"after killing {KILLED}: {sorted(active)}")
            # A latency alert may be pending on a busy machine here too (never firing).
            assert {alert for alert in active if alert[0] not in LATENCY_ALERTS or alert[2] != "pending"} \
                == {(name, KILLED, "pending") for name in DOWN_ALERTS}
        finally:
            prometheus.stop()

"""A real Prometheus (Debian's `prometheus` package) on a free port, and its HTTP API.

Not a test module: tests/deploy uses it to run the shipped scrape config,
alert rules and dashboard queries against a running stack.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from shared.infra.local import LocalServer, free_port


def start_prometheus(config: Path, data_dir: Path, timeout: float = 30.0) -> LocalServer:
    """`prometheus` with its own data folder on 127.0.0.1:<free port>, once /-/ready answers."""
    binary = shutil.which("prometheus")
    if binary is None:
        raise RuntimeError("prometheus not found: apt-get install prometheus (make test does)")
    data_dir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    with (data_dir / "prometheus.log").open("wb") as log:
        process = subprocess.Popen(
            [binary, f"--config.file={config}", f"--storage.tsdb.path={data_dir / 'tsdb'}",
             f"--web.listen-address=127.0.0.1:{port}"],
            stdout=log, stderr=subprocess.STDOUT)
    server = LocalServer("prometheus", f"http://127.0.0.1:{port}", process)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"prometheus exited at start; see {data_dir / 'prometheus.log'}")
        try:
            with urllib.request.urlopen(f"{server.url}/-/ready", timeout=1):
                return server
        except OSError:
            time.sleep(0.2)
    server.stop()
    raise RuntimeError(f"prometheus was not ready within {timeout}s")


class PrometheusAPI:
    """The few calls of https://prometheus.io/docs/prometheus/latest/querying/api/ the tests use."""

    def __init__(self, url: str) -> None:
        self.url = url

    def get(self, path: str, **params: str) -> Any:
        """`data` of a successful answer; raises with Prometheus' error otherwise."""
        query = urllib.parse.urlencode(params)
        try:
            with urllib.request.urlopen(f"{self.url}{path}?{query}", timeout=10) as reply:
                body = json.load(reply)
        except urllib.error.HTTPError as err:  # 400/422: a bad query, with the reason in the body
            body = json.load(err)
        if body.get("status") != "success":
            raise ValueError(f"{path} {params}: {body.get('errorType')}: {body.get('error')}")
        return body["data"]

    def query(self, expr: str) -> list[dict[str, Any]]:
        """An instant query's series (vector results)."""
        data = self.get("/api/v1/query", query=expr)
        assert data["resultType"] == "vector", (expr, data["resultType"])
        return list(data["result"])

    def label_values(self, label: str, match: str) -> list[str]:
        """What Grafana's `label_values(match, label)` lists."""
        return list(self.get(f"/api/v1/label/{label}/values", **{"match[]": match}))

    def alert_rules(self) -> list[dict[str, Any]]:
        """Every loaded alerting rule with its health and state."""
        groups = self.get("/api/v1/rules", type="alert")["groups"]
        return [rule for group in groups for rule in group["rules"]]

    def alerts(self) -> list[dict[str, Any]]:
        """Active (pending or firing) alerts."""
        return list(self.get("/api/v1/alerts")["alerts"])

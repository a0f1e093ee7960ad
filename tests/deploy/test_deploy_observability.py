"""Prometheus configs, alert rules and the Grafana dashboard query only real metrics."""

from __future__ import annotations

import re
import shutil
import subprocess
from typing import Any

import pytest

from shared.config import SERVICE_NAMES, Settings
from tests.support.deploy import (
    DASHBOARD_PATH,
    PROMETHEUS_DIR,
    TARGET_LABELS,
    dashboard_panels,
    load_yaml,
)

#: Metric names as they appear in PromQL.
_METRIC = re.compile(r"\b((?:stammtisch|process|python)_[a-zA-Z0-9_]+)\b")
#: `metric{matchers}` selectors.
_SELECTOR = re.compile(r"\b(stammtisch_[a-zA-Z0-9_]+)\s*\{([^}]*)\}")
_MATCHER = re.compile(r"([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)")
#: `by (...)` / `without (...)` grouping clauses.
_GROUPING = re.compile(r"\b(?:by|without)\s*\(([^)]*)\)")
_LABEL_VALUES = re.compile(r"label_values\(\s*([a-zA-Z0-9_]+)\s*,\s*([a-zA-Z0-9_]+)\s*\)")
SEVERITIES = {"info", "warning", "critical"}


def _dashboard_queries(dashboard: dict[str, Any]) -> list[str]:
    queries = [
        target["expr"]
        for panel in dashboard_panels(dashboard)
        for target in panel.get("targets", [])
    ]
    for variable in dashboard["templating"]["list"]:
        if variable["type"] == "query":
            query = variable["query"]
            queries.append(query["query"] if isinstance(query, dict) else query)
    return queries


def _alert_queries(alert_rules: list[dict[str, Any]]) -> list[str]:
    return [rule["expr"] for rule in alert_rules]


def _check_query(
    query: str, stammtisch_metrics: dict[str, frozenset[str]], registry_metrics: set[str]
) -> list[str]:
    """Problems with one PromQL query: unknown metrics, labels a metric does not have."""
    problems: list[str] = []
    used = set(_METRIC.findall(query))
    for name in sorted(used):
        if name.startswith("stammtisch_"):
            if name not in stammtisch_metrics:
                problems.append(f"{name} is not defined in shared/obs/metrics.py")
        elif name not in registry_metrics:
            problems.append(f"{name} is not exported by prometheus_client")
    for name, matchers in _SELECTOR.findall(query):
        allowed = stammtisch_metrics.get(name, frozenset()) | TARGET_LABELS
        for label in _MATCHER.findall(matchers):
            if label not in allowed:
                problems.append(f"{name} has no label {label!r}")
    labels_in_query = TARGET_LABELS.union(
        *(stammtisch_metrics.get(name, frozenset()) for name in used))
    for clause in _GROUPING.findall(query):
        for label in (part.strip() for part in clause.split(",")):
            if label and label not in labels_in_query:
                problems.append(f"grouping by {label!r}, which no metric in the query has")
    for name, label in _LABEL_VALUES.findall(query):
        if label not in stammtisch_metrics.get(name, frozenset()) | TARGET_LABELS:
            problems.append(f"label_values: {name} has no label {label!r}")
    return problems


# --- Prometheus configuration -------------------------------------------------


def test_compose_prometheus_scrapes_every_service(compose: dict[str, Any]) -> None:
    config = load_yaml(PROMETHEUS_DIR / "prometheus.yml")
    for rule_file in config["rule_files"]:
        assert (PROMETHEUS_DIR / rule_file).is_file(), rule_file
    (job,) = [job for job in config["scrape_configs"] if job["job_name"] == "stammtisch"]
    targets = {
        group["labels"]["component"]: group["targets"] for group in job["static_configs"]
    }
    assert set(targets) == set(SERVICE_NAMES)
    for service, [target] in targets.items():
        host, port = target.split(":")
        assert host == service and host in compose["services"]
        env = compose["services"][service]["environment"]
        assert int(port) == int(env["STAMMTISCH_METRICS_PORT"])


def test_k8s_prometheus_discovers_pods() -> None:
    config = load_yaml(PROMETHEUS_DIR / "prometheus-k8s.yml")
    for rule_file in config["rule_files"]:
        assert (PROMETHEUS_DIR / rule_file).is_file(), rule_file
    (job,) = [job for job in config["scrape_configs"] if job["job_name"] == "stammtisch"]
    assert [sd["role"] for sd in job["kubernetes_sd_configs"]] == ["pod"]
    targets = {relabel.get("target_label") for relabel in job["relabel_configs"]}
    assert "component" in targets  # same label as the compose config: one set of alerts
    kept = {
        tuple(relabel["source_labels"]): relabel["regex"]
        for relabel in job["relabel_configs"] if relabel.get("action") == "keep"
    }
    assert kept[("__meta_kubernetes_pod_container_port_name",)] == "metrics"


def test_local_prometheus_scrapes_the_local_stack() -> None:
    """prometheus-local.yml: the system Prometheus and `stammtisch up` on its default metrics port."""
    config = load_yaml(PROMETHEUS_DIR / "prometheus-local.yml")
    (job,) = config["scrape_configs"]
    assert job["job_name"] == "stammtisch"  # the job the dashboard selects
    (group,) = job["static_configs"]
    assert group["targets"] == [f"127.0.0.1:{Settings().metrics_port}"]
    assert set(group["labels"]) == {"component"}


# --- alert rules ------------------------------------------------------------------


def test_alert_rules_are_complete(alert_rules: list[dict[str, Any]]) -> None:
    names = [rule["alert"] for rule in alert_rules]
    assert len(names) == len(set(names)), "alert names are unique"
    for rule in alert_rules:
        assert rule["labels"]["severity"] in SEVERITIES, rule["alert"]
        assert rule["annotations"]["summary"], rule["alert"]
        assert rule["annotations"]["description"], rule["alert"]
        assert rule["expr"].strip(), rule["alert"]


def test_alerts_use_only_defined_metrics(
    alert_rules: list[dict[str, Any]], stammtisch_metrics: dict[str, frozenset[str]],
    registry_metrics: set[str],
) -> None:
    problems = [
        f"{rule['alert']}: {problem}"
        for rule in alert_rules
        for problem in _check_query(rule["expr"], stammtisch_metrics, registry_metrics)
    ]
    assert not problems, "\n".join(problems)


def test_alerts_cover_the_agreed_signals(alert_rules: list[dict[str, Any]]) -> None:
    text = "\n".join(_alert_queries(alert_rules))
    for needle in ("up{", "stammtisch_rpc_duration_seconds_bucket", "stammtisch_actions_total",
                   "stammtisch_commit_retries_total", "stammtisch_event_lag_seconds_bucket"):
        assert needle in text, needle


def test_every_metric_name_in_alert_files_is_defined(
    stammtisch_metrics: dict[str, frozenset[str]],
) -> None:
    """Also the comments, annotations and unit-test series: no stale names anywhere."""
    for name in ("alerts.yml", "alerts_test.yml"):
        text = (PROMETHEUS_DIR / name).read_text(encoding="utf-8")
        unknown = {m for m in re.findall(r"\bstammtisch_[a-z0-9_]+", text)} - set(stammtisch_metrics)
        assert not unknown, f"{name}: {sorted(unknown)}"


# --- Grafana dashboard ---------------------------------------------------------------


def test_dashboard_uses_only_defined_metrics(
    dashboard: dict[str, Any], stammtisch_metrics: dict[str, frozenset[str]],
    registry_metrics: set[str],
) -> None:
    problems = [
        f"{query}: {problem}"
        for query in _dashboard_queries(dashboard)
        for problem in _check_query(query, stammtisch_metrics, registry_metrics)
    ]
    assert not problems, "\n".join(problems)


def test_dashboard_shows_every_metric(dashboard: dict[str, Any], metric_families: set[str]) -> None:
    text = "\n".join(_dashboard_queries(dashboard))
    missing = {family for family in metric_families if family not in text}
    assert not missing, (
        f"metrics with no panel in {DASHBOARD_PATH.name}: {sorted(missing)}; add one")


def test_dashboard_structure(dashboard: dict[str, Any]) -> None:
    panels = list(dashboard_panels(dashboard))
    ids = [panel["id"] for panel in panels]
    assert len(ids) == len(set(ids)), "panel ids are unique"
    variables = {variable["name"] for variable in dashboard["templating"]["list"]}
    assert "datasource" in variables
    for panel in panels:
        grid = panel["gridPos"]
        assert grid["x"] >= 0 and grid["x"] + grid["w"] <= 24, panel["title"]
        if panel["type"] == "row":
            continue
        assert panel["targets"], panel["title"]
        for target in panel["targets"]:
            assert target["datasource"]["uid"] == "${datasource}", panel["title"]
            for variable in re.findall(r"\$(\w+)", target["expr"]):
                assert variable in variables or variable.startswith("__"), variable
    titles = " ".join(panel["title"].lower() for panel in panels)
    for needle in ("rpc rate", "p50", "p99", "applied", "refused", "live tables",
                   "open streams", "commit retries", "event lag", "turn clock"):
        assert needle in titles, needle


# --- promtool (when installed) -----------------------------------------------------


def _promtool(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["promtool", *args], cwd=PROMETHEUS_DIR, capture_output=True, text=True, timeout=120,
        check=False,
    )


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool not installed")
def test_promtool_check_config() -> None:
    """Checks prometheus.yml (with the rule files it names: alerts.yml) and prometheus-local.yml.

    prometheus-k8s.yml is left out: some promtool builds (Debian's) lack kubernetes_sd.
    """
    for config in ("prometheus.yml", "prometheus-local.yml"):
        result = _promtool("check", "config", config)
        assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool not installed")
def test_promtool_alert_unit_tests() -> None:
    """deploy/prometheus/alerts_test.yml: each alert fires on made-up series, and only then."""
    result = _promtool("test", "rules", "alerts_test.yml")
    assert result.returncode == 0, result.stdout + result.stderr

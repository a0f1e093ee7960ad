"""Shared fixtures for the deploy/ checks: file locations, parsed files, known names.

Everything here is offline and fast: the files are parsed, never deployed.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from prometheus_client import REGISTRY
from prometheus_client.metrics import MetricWrapperBase

import shared.obs.metrics
from shared.config import SERVICE_NAMES
from tests.support.deploy import (
    COMPOSE_PATH,
    DASHBOARD_PATH,
    K8S_DIR,
    PROMETHEUS_DIR,
    REPO_ROOT,
    load_yaml,
    load_yaml_all,
)


def _exposed_names(name: str, kind: str, labels: frozenset[str]) -> dict[str, frozenset[str]]:
    """Sample names a metric family shows on /metrics, each with the labels it carries."""
    if kind == "counter":
        return {f"{name}_total": labels, f"{name}_created": labels}
    if kind == "histogram":
        return {
            f"{name}_bucket": labels | {"le"},
            f"{name}_sum": labels,
            f"{name}_count": labels,
            f"{name}_created": labels,
        }
    if kind == "summary":
        return {name: labels | {"quantile"}, f"{name}_sum": labels, f"{name}_count": labels,
                f"{name}_created": labels}
    return {name: labels}


@pytest.fixture(scope="session")
def stammtisch_metrics() -> dict[str, frozenset[str]]:
    """Every sample name the metrics of shared/obs/metrics.py expose, with its label names."""
    names: dict[str, frozenset[str]] = {}
    for obj in vars(shared.obs.metrics).values():
        if not isinstance(obj, MetricWrapperBase):
            continue
        labels = frozenset(getattr(obj, "_labelnames", ()))
        for family in obj.describe():
            names.update(_exposed_names(family.name, family.type, labels))
    assert names, "shared/obs/metrics.py defines no metric"
    return names


@pytest.fixture(scope="session")
def metric_families() -> set[str]:
    """Family names (without _total/_bucket/...) of the metrics in shared/obs/metrics.py."""
    return {
        family.name
        for obj in vars(shared.obs.metrics).values() if isinstance(obj, MetricWrapperBase)
        for family in obj.describe()
    }


@pytest.fixture(scope="session")
def registry_metrics() -> set[str]:
    """Sample names the default registry exposes (process_*, python_*, stammtisch_*)."""
    names: set[str] = set()
    for family in REGISTRY.collect():
        names.update(_exposed_names(family.name, family.type, frozenset()))
    return names


@pytest.fixture(scope="session")
def known_env_vars() -> set[str]:
    """Every environment variable shared/config.py reads."""
    source = (REPO_ROOT / "shared" / "config.py").read_text(encoding="utf-8")
    names = set(re.findall(r'"((?:STAMMTISCH|REDIS|NATS)_[A-Z_]+)"', source))
    names |= {f"STAMMTISCH_{service.upper()}_PORT" for service in SERVICE_NAMES}
    assert {"REDIS_URL", "NATS_URL", "STAMMTISCH_BIND", "STAMMTISCH_TOKEN_SECRET"} <= names
    return names


@pytest.fixture(scope="session")
def compose() -> dict[str, Any]:
    """docker-compose.yml, parsed (YAML merge keys resolved)."""
    data = load_yaml(COMPOSE_PATH)
    assert isinstance(data, dict)
    return data


@pytest.fixture(scope="session")
def k8s_files() -> dict[str, list[dict[str, Any]]]:
    """deploy/k8s/*.yaml by file name, each as its list of documents."""
    files = {path.name: load_yaml_all(path) for path in sorted(K8S_DIR.glob("*.yaml"))}
    assert files, "no manifests in deploy/k8s"
    return files


@pytest.fixture(scope="session")
def dashboard() -> dict[str, Any]:
    data = json.loads(DASHBOARD_PATH.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


@pytest.fixture(scope="session")
def alert_rules() -> list[dict[str, Any]]:
    """Every rule of deploy/prometheus/alerts.yml."""
    data = load_yaml(PROMETHEUS_DIR / "alerts.yml")
    return [rule for group in data["groups"] for rule in group["rules"]]

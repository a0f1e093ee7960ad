"""Paths, names and small helpers shared by the tests/deploy modules (not a test module)."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from shared.config import DEFAULT_PORTS

REPO_ROOT = Path(__file__).resolve().parents[2]
DEPLOY_DIR = REPO_ROOT / "deploy"
K8S_DIR = DEPLOY_DIR / "k8s"
PROMETHEUS_DIR = DEPLOY_DIR / "prometheus"
DASHBOARD_PATH = DEPLOY_DIR / "grafana" / "stammtisch-dashboard.json"
COMPOSE_PATH = REPO_ROOT / "docker-compose.yml"
DOCKERFILE_PATH = DEPLOY_DIR / "Dockerfile"

#: The four services, in DEFAULT_PORTS order (lobby, engine, arbiter, scoring).
SERVICES: tuple[str, ...] = tuple(DEFAULT_PORTS)

#: Target labels the scrape configs attach (not metric labels).
TARGET_LABELS = frozenset({"job", "instance", "component", "namespace", "pod", "node"})


def load_yaml(path: Path) -> Any:
    """Parse one YAML document."""
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def load_yaml_all(path: Path) -> list[dict[str, Any]]:
    """Parse every non-empty document of a multi-document YAML file."""
    return [doc for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")) if doc]


def health_service_name(service: str) -> str:
    """The grpc.health.v1 name a service reports SERVING: its proto service's full name.

    Read from the generated code (shared/api), e.g. ``stammtisch.v1.LobbyService``.
    """
    module = importlib.import_module(f"shared.api.stammtisch.v1.{service}_pb2")
    (name,) = (desc.full_name for desc in module.DESCRIPTOR.services_by_name.values())
    return str(name)


def dashboard_panels(dashboard: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every panel of a Grafana dashboard, rows included."""
    for panel in dashboard["panels"]:
        yield panel
        yield from panel.get("panels", [])  # collapsed rows keep their panels inside

"""Paths, names and small helpers shared by the tests/deploy modules (not a test module)."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from shared.config import Settings

REPO_ROOT = Path(__file__).resolve().parents[2]
DEPLOY_DIR = REPO_ROOT / "deploy"
K8S_DIR = DEPLOY_DIR / "k8s"
CLUSTER_OVERLAY_DIR = DEPLOY_DIR / "overlays" / "cluster"
HELM_DIR = DEPLOY_DIR / "helm"
PROMETHEUS_DIR = DEPLOY_DIR / "prometheus"
DASHBOARD_PATH = DEPLOY_DIR / "grafana" / "stammtisch-dashboard.json"
COMPOSE_PATH = REPO_ROOT / "docker-compose.yml"
DOCKERFILE_PATH = DEPLOY_DIR / "Dockerfile"

#: Fixed Kubernetes versions the manifests must validate against: the oldest
#: with GA gRPC probes, and a recent one.
K8S_VERSIONS = ("1.27.0", "1.33.0")
CONFIGMAP_NAME = "stammtisch-config"

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


def configmap_of(k8s_files: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """The one ConfigMap of deploy/k8s (the services' environment)."""
    docs = [doc for docs in k8s_files.values() for doc in docs if doc.get("kind") == "ConfigMap"]
    assert [doc["metadata"]["name"] for doc in docs] == [CONFIGMAP_NAME]
    return docs[0]


def settings_from(data: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Settings:
    """Settings as a pod with this environment reads them."""
    for key, value in data.items():
        monkeypatch.setenv(key, value)
    return Settings.from_env()

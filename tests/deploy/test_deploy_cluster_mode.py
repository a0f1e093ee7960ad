"""deploy/helm values for the NATS and Redis charts, and the kustomize overlay that wires them.

Offline, like the other deploy checks: the values files are parsed for the
keys this deployment relies on (the charts' own keys, see deploy/README.md
for the chart versions), the overlay's patch is schema-validated and merged
into the base ConfigMap as kustomize would, and the merged settings must
point at the Services those Helm releases create.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from typing import Any

import kubernetes_validate
import pytest
import yaml

from shared.config import Settings
from tests.support.deploy import (
    CLUSTER_OVERLAY_DIR,
    CONFIGMAP_NAME,
    HELM_DIR,
    K8S_DIR,
    K8S_VERSIONS,
    REPO_ROOT,
    configmap_of,
    load_yaml,
    settings_from,
)

#: Helm releases and namespaces deploy/README.md installs the charts as.
NATS_RELEASE, NATS_NAMESPACE = "nats", "nats"
REDIS_RELEASE, REDIS_NAMESPACE = "redis-cluster", "redis"
NATS_CLIENT_PORT = 4222  # the chart's config.nats.port default
REDIS_PORT = 6379


@pytest.fixture(scope="module")
def nats_values() -> dict[str, Any]:
    data: dict[str, Any] = load_yaml(HELM_DIR / "nats-values.yaml")
    return data


@pytest.fixture(scope="module")
def redis_values() -> dict[str, Any]:
    data: dict[str, Any] = load_yaml(HELM_DIR / "redis-cluster-values.yaml")
    return data


def _patches() -> list[dict[str, Any]]:
    kustomization = load_yaml(CLUSTER_OVERLAY_DIR / "kustomization.yaml")
    return [load_yaml(CLUSTER_OVERLAY_DIR / patch["path"]) for patch in kustomization["patches"]]


@pytest.fixture
def cluster_data(k8s_files: dict[str, list[dict[str, Any]]]) -> dict[str, str]:
    """The ConfigMap's data with the overlay's patch merged in (kustomize's strategic merge)."""
    data = dict(configmap_of(k8s_files)["data"])
    for patch in _patches():
        assert (patch["kind"], patch["metadata"]["name"]) == ("ConfigMap", CONFIGMAP_NAME)
        data.update(patch["data"])
    return data


def test_overlay_builds_on_the_base() -> None:
    kustomization = load_yaml(CLUSTER_OVERLAY_DIR / "kustomization.yaml")
    assert kustomization["kind"] == "Kustomization"
    assert [(CLUSTER_OVERLAY_DIR / base).resolve() for base in kustomization["resources"]] == [K8S_DIR]
    assert _patches()


@pytest.mark.parametrize("version", K8S_VERSIONS)
def test_overlay_patches_are_schema_valid(version: str) -> None:
    for patch in _patches():
        kubernetes_validate.validate(patch, version, strict=True)


def test_nats_values_make_a_jetstream_cluster_on_disk(nats_values: dict[str, Any]) -> None:
    config = nats_values["config"]
    assert config["cluster"]["enabled"] is True
    assert config["cluster"]["replicas"] == 3
    jetstream = config["jetstream"]
    assert jetstream["enabled"] is True
    assert jetstream["fileStore"]["enabled"] is True and jetstream["fileStore"]["pvc"]["enabled"] is True
    assert jetstream["memoryStore"]["enabled"] is False
    assert "kubernetes.io/hostname" in nats_values["podTemplate"]["topologySpreadConstraints"]


def test_redis_values_make_a_cluster_with_replicas(redis_values: dict[str, Any]) -> None:
    nodes, replicas = redis_values["cluster"]["nodes"], redis_values["cluster"]["replicas"]
    masters, rest = divmod(nodes, 1 + replicas)
    assert rest == 0 and masters >= 3 and replicas >= 1
    assert redis_values["redis"]["useAOFPersistence"] == "yes"
    assert redis_values["persistence"]["enabled"] is True


def test_redis_wants_the_password_of_a_secret_and_admits_only_stammtisch(
        redis_values: dict[str, Any], k8s_files: dict[str, list[dict[str, Any]]]) -> None:
    assert redis_values["usePassword"] is True
    assert redis_values["existingSecret"] and redis_values["existingSecretPasswordKey"]
    assert not redis_values.get("password"), "the password belongs in the Secret, not the values"
    policy = redis_values["networkPolicy"]
    assert policy["enabled"] is True and policy["allowExternal"] is False
    (kustomization,) = k8s_files["kustomization.yaml"]
    assert policy["ingressNSMatchLabels"] == {"kubernetes.io/metadata.name": kustomization["namespace"]}
    for name, docs in k8s_files.items():
        for doc in docs:
            if doc["kind"] == "Deployment":
                labels = doc["spec"]["template"]["metadata"]["labels"]
                assert policy["ingressNSPodMatchLabels"].items() <= labels.items(), name


def test_nats_admits_one_user_whose_login_comes_from_a_secret(nats_values: dict[str, Any]) -> None:
    """The config names environment variables (no value), which the container fills from a Secret."""
    (user,) = nats_values["config"]["merge"]["authorization"]["users"]
    env = nats_values["container"]["env"]
    for field, reference in user.items():
        variable = re.fullmatch(r"<< \$(\w+) >>", reference)
        assert variable, f"{field}: {reference!r} names no environment variable"
        assert env[variable[1]]["valueFrom"]["secretKeyRef"]["name"], field
    assert set(user) == {"user", "password"}


def test_cluster_configmap_points_at_the_helm_releases(
        cluster_data: dict[str, str], nats_values: dict[str, Any], known_env_vars: set[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    assert set(cluster_data) <= known_env_vars, set(cluster_data) - known_env_vars
    settings: Settings = settings_from(cluster_data, monkeypatch)
    pods = range(nats_values["config"]["cluster"]["replicas"])
    assert settings.nats_servers == [
        f"nats://{NATS_RELEASE}-{i}.{NATS_RELEASE}-headless.{NATS_NAMESPACE}.svc.cluster.local:"
        f"{NATS_CLIENT_PORT}" for i in pods]
    assert settings.stream_replicas == 3 <= len(pods)
    assert settings.redis_url == (
        f"redis://{REDIS_RELEASE}.{REDIS_NAMESPACE}.svc.cluster.local:{REDIS_PORT}/0")
    assert settings.redis_cluster and settings.shard_count == 16 and settings.replica_wait_ms > 0


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl (kustomize) not installed")
def test_kustomize_build_of_the_overlay(cluster_data: dict[str, str]) -> None:
    result = subprocess.run(
        ["kubectl", "kustomize", str(CLUSTER_OVERLAY_DIR)], cwd=REPO_ROOT, capture_output=True,
        text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    docs = [doc for doc in yaml.safe_load_all(result.stdout) if doc]
    (configmap,) = [doc for doc in docs if doc["kind"] == "ConfigMap"]
    assert configmap["data"] == cluster_data

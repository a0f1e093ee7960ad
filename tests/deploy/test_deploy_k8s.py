"""deploy/k8s: schema-valid manifests, and every Deployment wired the way the code expects."""

from __future__ import annotations

import shutil
import subprocess
from typing import Any

import kubernetes_validate
import pytest
import yaml

from shared.config import DEFAULT_PORTS, SERVICE_NAMES, Settings
from shared.infra.credentials import login_of
from shared.rpc.token_secret import require_token_secret
from tests.support.deploy import (
    CONFIGMAP_NAME,
    K8S_DIR,
    K8S_VERSIONS,
    REPO_ROOT,
    configmap_of,
    health_service_name,
    load_yaml_all,
    settings_from,
)

SECRET_NAME = "stammtisch-token"
SECRET_KEY = "STAMMTISCH_TOKEN_SECRET"
#: The Secret with the Redis and NATS logins, and the keys every service reads from it.
INFRA_SECRET = "stammtisch-infra"
INFRA_KEYS = ("STAMMTISCH_REDIS_PASSWORD", "STAMMTISCH_NATS_USER", "STAMMTISCH_NATS_PASSWORD")
#: Read when present (a Redis ACL user instead of the default user).
INFRA_OPTIONAL_KEYS = ("STAMMTISCH_REDIS_USERNAME",)
KUSTOMIZATION = "kustomization.yaml"
#: Services that must survive a node loss (two replicas at least).
HA_SERVICES = ("lobby", "engine", "arbiter")


def _one(docs: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    found = [doc for doc in docs if doc["kind"] == kind]
    assert len(found) == 1, f"expected one {kind}, found {len(found)}"
    return found[0]


def _container(deployment: dict[str, Any]) -> dict[str, Any]:
    containers = deployment["spec"]["template"]["spec"]["containers"]
    assert len(containers) == 1
    container: dict[str, Any] = containers[0]
    return container


def _resources() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for path in sorted(K8S_DIR.glob("*.yaml")):
        if path.name == KUSTOMIZATION:
            continue
        out += [(f"{path.name}:{doc['kind']}/{doc['metadata']['name']}", doc)
                for doc in load_yaml_all(path)]
    return out


@pytest.mark.parametrize("version", K8S_VERSIONS)
@pytest.mark.parametrize(("where", "doc"), _resources(), ids=[w for w, _ in _resources()])
def test_manifest_is_schema_valid(where: str, doc: dict[str, Any], version: str) -> None:
    """Strict validation: unknown fields are errors too (the schemas ship with the library)."""
    kubernetes_validate.validate(doc, version, strict=True)


def test_kustomization_lists_every_manifest(k8s_files: dict[str, list[dict[str, Any]]]) -> None:
    (kustomization,) = k8s_files[KUSTOMIZATION]
    assert kustomization["kind"] == "Kustomization"
    resources = kustomization["resources"]
    assert len(resources) == len(set(resources))
    assert set(resources) == set(k8s_files) - {KUSTOMIZATION}
    assert kustomization["namespace"] == "stammtisch"
    assert [image["name"] for image in kustomization["images"]] == ["stammtisch"]


def test_deploys_exactly_the_services_of_the_one_list(k8s_files: dict[str, list[dict[str, Any]]]) -> None:
    """A service added to (or dropped from) shared.config.SERVICE_NAMES needs its manifest too."""
    deployments = [doc["metadata"]["name"] for docs in k8s_files.values() for doc in docs
                   if doc["kind"] == "Deployment"]
    assert sorted(deployments) == sorted(SERVICE_NAMES)


@pytest.mark.parametrize("service", SERVICE_NAMES)
def test_service_file_holds_its_four_objects(
    service: str, k8s_files: dict[str, list[dict[str, Any]]]
) -> None:
    docs = k8s_files[f"{service}.yaml"]
    kinds = sorted(doc["kind"] for doc in docs)
    assert kinds == ["Deployment", "HorizontalPodAutoscaler", "PodDisruptionBudget", "Service"]
    assert {doc["metadata"]["name"] for doc in docs} == {service}


@pytest.mark.parametrize("service", SERVICE_NAMES)
def test_deployment(
    service: str, k8s_files: dict[str, list[dict[str, Any]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    deployment = _one(k8s_files[f"{service}.yaml"], "Deployment")
    settings = settings_from(configmap_of(k8s_files)["data"], monkeypatch)
    grpc_port = settings.ports[service]
    assert grpc_port == DEFAULT_PORTS[service]

    spec = deployment["spec"]
    if service in HA_SERVICES:
        assert spec["replicas"] >= 2
    pod = spec["template"]
    labels = pod["metadata"]["labels"]
    assert spec["selector"]["matchLabels"].items() <= labels.items()
    assert labels["app.kubernetes.io/component"] == service
    assert labels["app.kubernetes.io/part-of"] == "stammtisch"

    container = _container(deployment)
    assert container["image"] == "stammtisch"  # the kustomization's `images:` sets name and tag
    assert container["args"] == ["serve", "--service", service]
    ports = {port["name"]: port["containerPort"] for port in container["ports"]}
    assert ports == {"grpc": grpc_port, "metrics": settings.metrics_port, **_page_port(service, settings)}

    # Prometheus scrape annotations point at the metrics port.
    annotations = pod["metadata"]["annotations"]
    assert annotations["prometheus.io/scrape"] == "true"
    assert int(annotations["prometheus.io/port"]) == settings.metrics_port
    assert annotations["prometheus.io/path"] == "/metrics"

    # Resources: requests and limits for CPU and memory.
    for section in ("requests", "limits"):
        assert set(container["resources"][section]) >= {"cpu", "memory"}, section

    # Probes: native gRPC on the service's own port; readiness asks for the service by name.
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert container[probe]["grpc"]["port"] == grpc_port, probe
    assert container["readinessProbe"]["grpc"]["service"] == health_service_name(service)
    assert container["livenessProbe"]["grpc"].get("service", "") in ("", health_service_name(service))

    # Environment: the shared ConfigMap plus the token secret from the Secret.
    assert container["envFrom"] == [{"configMapRef": {"name": CONFIGMAP_NAME}}]
    env = {item["name"]: item for item in container["env"]}
    assert env[SECRET_KEY]["valueFrom"]["secretKeyRef"] == {"name": SECRET_NAME, "key": SECRET_KEY}
    previous = f"{SECRET_KEY}_PREVIOUS"  # rotation: optional, from the same Secret
    assert env[previous]["valueFrom"]["secretKeyRef"] == {"name": SECRET_NAME, "key": previous,
                                                          "optional": True}
    # The Redis and NATS logins, from their Secret (the ConfigMap's URLs carry none).
    for key in INFRA_KEYS:
        assert env[key]["valueFrom"]["secretKeyRef"] == {"name": INFRA_SECRET, "key": key}, key
    for key in INFRA_OPTIONAL_KEYS:
        assert env[key]["valueFrom"]["secretKeyRef"] == {"name": INFRA_SECRET, "key": key,
                                                         "optional": True}, key
    assert all("valueFrom" in item for item in container["env"]), "no value written in a manifest"

    # A graceful stop (preStop sleep + STAMMTISCH_GRACE_SECONDS) fits in the grace period.
    pre_stop = container["lifecycle"]["preStop"]["exec"]["command"]
    assert pre_stop[0] == "sleep"
    budget = settings.grace_seconds + float(pre_stop[1])
    assert pod["spec"]["terminationGracePeriodSeconds"] > budget

    # Non-root, read-only root filesystem, nothing to escalate; /tmp is the only scratch space.
    pod_security = pod["spec"]["securityContext"]
    assert pod_security["runAsNonRoot"] is True
    assert pod_security["runAsUser"] > 0
    security = container["securityContext"]
    assert security["readOnlyRootFilesystem"] is True
    assert security["allowPrivilegeEscalation"] is False
    assert security["capabilities"]["drop"] == ["ALL"]
    mounts = {mount["mountPath"] for mount in container["volumeMounts"]}
    assert mounts == {"/tmp"}


def _page_port(service: str, settings: Settings) -> dict[str, int]:
    """The tournament service also serves its page over HTTP (services/tournament/page.py)."""
    return {"page": settings.tournament_page_port} if service == "tournament" else {}


@pytest.mark.parametrize("service", SERVICE_NAMES)
def test_service_hpa_pdb_match_the_deployment(
    service: str, k8s_files: dict[str, list[dict[str, Any]]]
) -> None:
    docs = k8s_files[f"{service}.yaml"]
    deployment = _one(docs, "Deployment")
    pod_labels = deployment["spec"]["template"]["metadata"]["labels"]
    container = _container(deployment)
    container_ports = {port["name"]: port["containerPort"] for port in container["ports"]}

    svc = _one(docs, "Service")
    assert svc["spec"]["selector"].items() <= pod_labels.items()
    svc_ports = {port["name"]: port for port in svc["spec"]["ports"]}
    assert set(svc_ports) == {"grpc", "metrics", *_page_port(service, Settings())}
    for name, port in svc_ports.items():
        assert port["targetPort"] == name
        assert port["port"] == container_ports[name]

    hpa = _one(docs, "HorizontalPodAutoscaler")
    assert hpa["apiVersion"] == "autoscaling/v2"
    assert hpa["spec"]["scaleTargetRef"] == {
        "apiVersion": "apps/v1", "kind": "Deployment", "name": service}
    assert hpa["spec"]["minReplicas"] == deployment["spec"]["replicas"]
    assert hpa["spec"]["maxReplicas"] > hpa["spec"]["minReplicas"]
    assert [metric["resource"]["name"] for metric in hpa["spec"]["metrics"]] == ["cpu"]

    pdb = _one(docs, "PodDisruptionBudget")
    assert pdb["spec"]["selector"]["matchLabels"].items() <= pod_labels.items()


def test_configmap_sets_only_known_variables(
    k8s_files: dict[str, list[dict[str, Any]]], known_env_vars: set[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    data = configmap_of(k8s_files)["data"]
    assert set(data) <= known_env_vars, set(data) - known_env_vars
    assert SECRET_KEY not in data, "the token secret belongs in the Secret"
    assert not set(data) & {*INFRA_KEYS, *INFRA_OPTIONAL_KEYS}, "logins belong in the Secret"
    assert login_of(data["REDIS_URL"]) is None and login_of(data["NATS_URL"]) is None
    assert all(isinstance(value, str) for value in data.values())
    settings = settings_from(data, monkeypatch)  # every value parses
    assert settings.bind_host == "0.0.0.0"
    assert settings.ports == DEFAULT_PORTS
    # Every service's port is set here, so one edit of the ConfigMap moves any of them.
    assert {f"STAMMTISCH_{name.upper()}_PORT" for name in SERVICE_NAMES} <= set(data)


def test_secret_template_is_an_obvious_placeholder(
    k8s_files: dict[str, list[dict[str, Any]]],
) -> None:
    secrets = {doc["metadata"]["name"]: doc for docs in k8s_files.values() for doc in docs
               if doc["kind"] == "Secret"}
    assert set(secrets) == {SECRET_NAME, INFRA_SECRET}
    value = secrets[SECRET_NAME]["stringData"][SECRET_KEY]
    assert "REPLACE" in value.upper()
    with pytest.raises(SystemExit, match="at least 32 bytes"):  # a service given it does not start
        require_token_secret(Settings(token_secret=value))
    logins = secrets[INFRA_SECRET]["stringData"]
    assert set(logins) == set(INFRA_KEYS)
    for key in INFRA_KEYS:
        if key.endswith("PASSWORD"):
            assert logins[key] == "REPLACE-ME", key


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl (kustomize) not installed")
def test_kustomize_build() -> None:
    """`kubectl kustomize deploy/k8s` renders, namespaces everything and sets the image tag."""
    result = subprocess.run(
        ["kubectl", "kustomize", str(K8S_DIR)], cwd=REPO_ROOT, capture_output=True, text=True,
        timeout=120, check=False,
    )
    assert result.returncode == 0, result.stderr
    docs = [doc for doc in yaml.safe_load_all(result.stdout) if doc]
    # namespace, configmap, 2 secrets + 4 per service + the door's two Ingresses (door.yaml)
    assert len(docs) == 4 + 4 * len(SERVICE_NAMES) + 2
    for doc in docs:
        if doc["kind"] != "Namespace":
            assert doc["metadata"]["namespace"] == "stammtisch", doc["metadata"]["name"]
        if doc["kind"] == "Deployment":
            assert _container(doc)["image"].startswith("stammtisch:")

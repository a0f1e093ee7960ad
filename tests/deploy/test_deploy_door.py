"""deploy/k8s/door.yaml: the front door on Kubernetes routes every proto service to its Service
over gRPC with TLS, and spreads only the play services' calls by the table header."""

from __future__ import annotations

from typing import Any

import pytest

from services.host.door import COMMON_PATHS, proto_services
from shared.config import SERVICE_NAMES
from shared.sdk.client import TABLE_HEADER
from shared.tables.placement import TABLE_SERVICES

DOOR = "door.yaml"


def _ingresses(k8s_files: dict[str, list[dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    return {doc["metadata"]["name"]: doc for doc in k8s_files[DOOR] if doc["kind"] == "Ingress"}


def _routes(ingress: dict[str, Any]) -> dict[str, str]:
    """Path -> the Service it goes to."""
    return {path["path"]: path["backend"]["service"]["name"]
            for rule in ingress["spec"]["rules"] for path in rule["http"]["paths"]}


def test_every_proto_service_reaches_its_service(k8s_files: dict[str, list[dict[str, Any]]]) -> None:
    routes: dict[str, str] = {}
    for ingress in _ingresses(k8s_files).values():
        routes.update(_routes(ingress))
    wanted = {f"/{path}/": name for name in SERVICE_NAMES for path in proto_services(name)}
    wanted.update({f"/{path}/": "lobby" for path in COMMON_PATHS})
    assert routes == wanted
    services = {doc["metadata"]["name"]: doc for docs in k8s_files.values() for doc in docs
                if doc["kind"] == "Service"}
    for ingress in _ingresses(k8s_files).values():
        for rule in ingress["spec"]["rules"]:
            for path in rule["http"]["paths"]:
                backend = path["backend"]["service"]
                ports = [port["name"] for port in services[backend["name"]]["spec"]["ports"]]
                assert backend["port"]["name"] == "grpc" in ports


def test_grpc_with_tls_from_a_secret_and_no_body_limit(k8s_files: dict[str, list[dict[str, Any]]]) -> None:
    ingresses = _ingresses(k8s_files)
    assert ingresses
    for ingress in ingresses.values():
        notes = ingress["metadata"]["annotations"]
        assert notes["nginx.ingress.kubernetes.io/backend-protocol"] == "GRPC"
        assert notes["nginx.ingress.kubernetes.io/proxy-body-size"] == "0"
        assert ingress["spec"]["ingressClassName"] == "nginx"
        hosts = {rule["host"] for rule in ingress["spec"]["rules"]}
        (tls,) = ingress["spec"]["tls"]
        assert set(tls["hosts"]) == hosts and tls["secretName"] == "stammtisch-tls"
    kinds = [doc["kind"] for doc in k8s_files[DOOR]]
    assert "Secret" not in kinds, "the certificate is made outside the manifests"


@pytest.mark.parametrize("spread_by_table", [True, False])
def test_only_the_play_services_are_spread_by_the_table_header(
        k8s_files: dict[str, list[dict[str, Any]]], spread_by_table: bool) -> None:
    hashed = f"$http_{TABLE_HEADER.replace('-', '_')}"
    for ingress in _ingresses(k8s_files).values():
        by = ingress["metadata"]["annotations"].get("nginx.ingress.kubernetes.io/upstream-hash-by")
        if (by == hashed) != spread_by_table:
            continue
        services = set(_routes(ingress).values())
        assert (services <= set(TABLE_SERVICES)) if spread_by_table else not services & set(TABLE_SERVICES)

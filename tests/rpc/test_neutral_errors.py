"""Core and storage code refuses in neutral terms; only the RPC layer knows gRPC statuses."""

from __future__ import annotations

import subprocess
import sys

import grpc
import pytest

from shared.errors import BadInput, Busy, NotFound, Refusal, Refused
from shared.ids import IdError
from shared.rpc.errors import ServiceError, status_of_refusal

#: Pure or storage code: importing it must not load gRPC.
NEUTRAL_MODULES = ("services.lobby.model", "services.lobby.store", "shared.tables.records",
                   "shared.tables.store", "shared.errors", "shared.ids")


@pytest.mark.parametrize("module", NEUTRAL_MODULES)
def test_core_and_storage_modules_import_no_grpc(module: str) -> None:
    # A fresh interpreter: this test process has gRPC loaded already.
    probe = (f"import sys, {module}\n"
             "print(' '.join(sorted(name for name in sys.modules"
             " if name.split('.')[0] in ('grpc', 'grpc_status', 'google'))))")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                            check=True, timeout=60)
    assert result.stdout.split() == [], f"{module} loads {result.stdout.strip()}"


@pytest.mark.parametrize(("refusal", "status"), [
    (BadInput("seat must be 0..2"), grpc.StatusCode.INVALID_ARGUMENT),
    (NotFound("table 'x'"), grpc.StatusCode.NOT_FOUND),
    (Refused("the table is full"), grpc.StatusCode.FAILED_PRECONDITION),
    (Busy("table 'x' is busy; retry"), grpc.StatusCode.UNAVAILABLE),
    (ServiceError(grpc.StatusCode.UNAUTHENTICATED, "invalid token"), grpc.StatusCode.UNAUTHENTICATED),
    (IdError("table_id is required"), grpc.StatusCode.INVALID_ARGUMENT),
])
def test_each_refusal_travels_with_its_status(refusal: Refusal, status: grpc.StatusCode) -> None:
    assert status_of_refusal(refusal) == status
    assert refusal.message and str(refusal) == refusal.message


def test_not_found_names_what_is_missing() -> None:
    assert NotFound("a game at table 't1'").message == "a game at table 't1' not found"

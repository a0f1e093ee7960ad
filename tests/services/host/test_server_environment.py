"""The servers' grpc-core experiments: set for `stammtisch up` and `serve`, unless the
environment says otherwise."""

from __future__ import annotations

import os

import pytest

from services.host import cli


def test_the_servers_get_the_listener_on_grpc_cores_own_poller(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GRPC_EXPERIMENTS", raising=False)
    cli._server_environment()
    assert os.environ["GRPC_EXPERIMENTS"] == cli.SERVER_GRPC_EXPERIMENTS == "-event_engine_listener"


def test_an_operators_choice_stands(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRPC_EXPERIMENTS", "")
    cli._server_environment()
    assert os.environ["GRPC_EXPERIMENTS"] == ""

"""One list of services (shared.config.SERVICE_NAMES): the CLI, the runner and the SDK read it.

The CLI once kept its own copy of the names beside the runner's; a service added
to one and not the other could be run but not chosen (or chosen but not run).
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
from importlib import import_module

import pytest

from services.host.base import Service
from services.host.cli import build_parser
from services.host.runner import NEEDS
from shared.config import DEFAULT_PORTS, SERVICE_NAMES, Settings
from shared.sdk.client import Endpoints


def _service_choices(command: str) -> list[str]:
    """The --service choices of one `stammtisch` subcommand."""
    parser = build_parser()
    (commands,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    (option,) = (a for a in commands.choices[command]._actions if "--service" in a.option_strings)
    assert option.choices is not None
    return list(option.choices)


@pytest.mark.parametrize("command", ["up", "serve", "healthcheck"])
def test_the_cli_offers_every_service_of_the_one_list(command: str) -> None:
    assert _service_choices(command) == list(SERVICE_NAMES)


def test_every_service_has_a_port_a_package_and_its_needs() -> None:
    assert list(DEFAULT_PORTS) == list(SERVICE_NAMES)
    assert set(Settings().ports) == set(SERVICE_NAMES)
    assert set(NEEDS) == set(SERVICE_NAMES)
    for name in SERVICE_NAMES:
        module = import_module(f"services.{name}.service")
        assert callable(module.create), name
        served = [cls for _, cls in inspect.getmembers(module, inspect.isclass)
                  if issubclass(cls, Service) and cls is not Service and cls.__module__ == module.__name__]
        assert [cls.name for cls in served] == [name]


def test_the_sdk_has_an_endpoint_for_every_service() -> None:
    addresses = [field.name for field in dataclasses.fields(Endpoints) if field.type == "str"]
    assert addresses == list(SERVICE_NAMES)
    ends = Endpoints.on_host("example", {name: 1000 + index for index, name in enumerate(SERVICE_NAMES)})
    assert [getattr(ends, name) for name in SERVICE_NAMES] == [
        f"example:{1000 + index}" for index in range(len(SERVICE_NAMES))]
    assert Endpoints.of({name: f"{name}:1" for name in SERVICE_NAMES}, lobby="other:2").lobby == "other:2"

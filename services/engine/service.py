"""The engine: the tables of the turn-based games (the catalogue's ``service`` "engine")."""

from __future__ import annotations

from services.host.base import Service
from services.play.servicer import PlayService
from shared.infra.runtime import Runtime


class EngineService(PlayService):
    """Turn-based tables: the shared play servicer, turn clocks and bot seats."""

    name = "engine"
    full_name = "stammtisch.v1.EngineService"


def create(runtime: Runtime) -> Service:
    """Entry point for the runner."""
    return EngineService(runtime)

"""Names of the games and their engine classes, loaded lazily."""

from __future__ import annotations

from importlib import import_module

from shared.games.base import Game

#: Scenario/API name -> "module:Class" of the engine.
ENGINES: dict[str, str] = {
    "willi": "shared.games.willi.engine:Willi",
    "willi-stich": "shared.games.stich.engine:WilliStich",
    "wie-waldi": "shared.games.waldi.engine:WieWaldi",
    "willi-wacker": "shared.games.wacker.engine:WilliWacker",
}


def engine_class(name: str) -> type[Game]:
    """The engine class for a game name; KeyError for unknown names."""
    module_name, _, class_name = ENGINES[name].partition(":")
    cls: type[Game] = getattr(import_module(module_name), class_name)
    return cls


def restore(name: str, data: dict) -> Game:  # type: ignore[type-arg]
    """Restore a stored game of the named kind."""
    return engine_class(name).from_dict(data)

"""Names of the games and their engine classes, loaded lazily."""

from __future__ import annotations

from importlib import import_module

from shared.games.base import Game
from shared.games.bots import Bot

#: Scenario/API name -> "module:Class" of the engine.
ENGINES: dict[str, str] = {
    "willi": "shared.games.willi.engine:Willi",
    "willi-stich": "shared.games.stich.engine:WilliStich",
    "wie-waldi": "shared.games.waldi.engine:WieWaldi",
    "willi-wacker": "shared.games.wacker.engine:WilliWacker",
}


#: Game name -> module exporting ``BOTS`` (level -> bot class).
BOT_MODULES: dict[str, str] = {name: path.rsplit(".", 1)[0] + ".bots" for name, path in
                               ((n, e.partition(":")[0]) for n, e in ENGINES.items())}


def bot_levels(name: str) -> dict[str, type[Bot]]:
    """The bots available for a game, by level ("random", "heuristic")."""
    levels: dict[str, type[Bot]] = import_module(BOT_MODULES[name]).BOTS
    return levels


def engine_class(name: str) -> type[Game]:
    """The engine class for a game name; KeyError for unknown names."""
    module_name, _, class_name = ENGINES[name].partition(":")
    cls: type[Game] = getattr(import_module(module_name), class_name)
    return cls


def restore(name: str, data: dict) -> Game:  # type: ignore[type-arg]
    """Restore a stored game of the named kind."""
    return engine_class(name).from_dict(data)

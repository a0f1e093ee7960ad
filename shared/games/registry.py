"""The engine class and the bots of each game in the catalogue, imported lazily."""

from __future__ import annotations

from importlib import import_module

from shared.games.base import Game
from shared.games.bots import Bot
from shared.games.catalog import entry


def bot_levels(name: str) -> dict[str, type[Bot]]:
    """The bots available for a game, by level ("random", "heuristic")."""
    levels: dict[str, type[Bot]] = import_module(entry(name).package + ".bots").BOTS
    return levels


def engine_class(name: str) -> type[Game]:
    """The engine class for a game name; KeyError for unknown names."""
    module_name, _, class_name = entry(name).engine.partition(":")
    cls: type[Game] = getattr(import_module(module_name), class_name)
    return cls

"""The engine class, the bots and the words of each game in the catalogue, imported lazily.

By convention a game's package has a ``bots`` module (``BOTS``: level -> bot class) and a
``words`` module (``WORDS``: a :class:`shared.games.words.Words`) beside its engine.
"""

from __future__ import annotations

from importlib import import_module

from shared.games.base import Game
from shared.games.bots import Bot
from shared.games.catalog import entry
from shared.games.words import Words


def bot_levels(name: str) -> dict[str, type[Bot]]:
    """The bots available for a game, by level ("random", "heuristic")."""
    levels: dict[str, type[Bot]] = import_module(entry(name).package + ".bots").BOTS
    return levels


def engine_class(name: str) -> type[Game]:
    """The engine class for a game name; KeyError for unknown names."""
    module_name, _, class_name = entry(name).engine.partition(":")
    cls: type[Game] = getattr(import_module(module_name), class_name)
    return cls


def words_of(name: str) -> Words:
    """The game's words for text clients; KeyError for unknown names."""
    words: Words = import_module(entry(name).package + ".words").WORDS
    return words

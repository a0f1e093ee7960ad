"""The one catalogue of games: every fact about a game that code outside its engine needs.

The lobby, the engine and arbiter services, the clocks, the SDK, the CLI and
the terminal client all read these entries. Each game's package builds its own
entry (``GAME`` in its ``__init__``) and registers it as a ``stammtisch.games``
entry point, the built-in games in this project's pyproject.toml and any other
game in its own: adding a game is one package that nothing else has to know.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from importlib.resources import files
from importlib.resources.abc import Traversable
from typing import Any, Literal

Service = Literal["engine", "arbiter"]


@dataclass(frozen=True)
class Option:
    """One table option of a game: its name, its default and what it does."""

    name: str
    default: Any
    doc: str
    #: The value types accepted besides null; empty: the default's type (any for a null default).
    types: tuple[type, ...] = ()
    #: Bounds of a numeric option (inclusive; None: unbounded on that side).
    minimum: float | None = None
    maximum: float | None = None


@dataclass(frozen=True)
class GameEntry:
    """One game as the rest of the system sees it."""

    #: The name used everywhere: the API, scenarios, keys, metrics, the CLI (lower-case words
    #: joined by "-").
    name: str
    #: The name players read.
    title: str
    #: The engine class, as ``module:Class`` (imported only when needed).
    engine: str
    min_seats: int
    max_seats: int
    #: Seats a new table gets when a client names none (the terminal client).
    default_seats: int
    #: Every seat may act at any time (no turn order): such games are played by the arbiter.
    simultaneous: bool = False
    #: The rules have their own ``leave`` and ``chat`` actions: a seat that leaves a running
    #: game leaves it by rule, and table talk during a game is a game action.
    leave_and_chat: bool = False
    #: The deal is fixed at the start of each round of play (by seed and round), so tables
    #: playing the same seeds hold the same cards: duplicate deals for tournaments.
    duplicate_deals: bool = False
    #: The ``hands`` of the conformance summary keep an order the rules fix, so scenarios
    #: compare them as lists (otherwise as multisets: the order there is no rule).
    ordered_hands: bool = False
    options: tuple[Option, ...] = ()
    #: Options that make a short game of a round or a few (tests, chaos runs, demonstrations);
    #: empty when a game with the defaults is short already.
    short_options: Mapping[str, Any] = field(default_factory=dict)
    #: Options a table's next game takes over from the last game's final public view:
    #: option name -> view key.
    carried_over: Mapping[str, str] = field(default_factory=dict)

    @property
    def service(self) -> Service:
        """The service that plays the game: the arbiter for simultaneous games."""
        return "arbiter" if self.simultaneous else "engine"

    @property
    def package(self) -> str:
        """The game's package: its engine, ``bots`` and ``words`` modules, RULES.md, ``schemas/``
        and ``cases/`` live in it."""
        return self.engine.partition(":")[0].rsplit(".", 1)[0]

    def resource(self, name: str) -> Traversable:
        """A file or folder of the game's package (``RULES.md``, ``schemas``, ``cases``)."""
        return files(self.package).joinpath(name)

    def schema(self, kind: str) -> dict[str, Any]:
        """The game's JSON Schema of a ``kind``, parsed: "view" (what ``view(seat)`` gives),
        "events" (one event) or "actions" (one action, as clients send it)."""
        loaded: dict[str, Any] = json.loads(self.resource(f"schemas/{kind}.schema.json").read_text())
        return loaded

    def option_defaults(self) -> dict[str, Any]:
        """Every option with its default (a fresh dict)."""
        return {option.name: option.default for option in self.options}


#: The entry-point group every game registers in, built-in or installed as its own package.
ENTRY_POINT_GROUP = "stammtisch.games"


class Catalogue(Mapping[str, GameEntry]):
    """Every installed game by name, found once through the ``stammtisch.games`` entry points.

    Discovery is lazy so that a game package may import this module (to build its entry)
    without a cycle; a name registered twice, or an entry point that is no GameEntry, is an error.
    """

    def __init__(self) -> None:
        self._games: dict[str, GameEntry] | None = None

    def _loaded(self) -> dict[str, GameEntry]:
        if self._games is None:
            games: dict[str, GameEntry] = {}
            for point in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda p: p.name):
                game = point.load()
                if not isinstance(game, GameEntry) or game.name != point.name:
                    raise TypeError(f"entry point {point.value} is not the GameEntry {point.name!r}")
                if game.name in games:
                    raise ValueError(f"two games registered as {game.name!r}")
                games[game.name] = game
            self._games = games
        return self._games

    def __getitem__(self, name: str) -> GameEntry:
        return self._loaded()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._loaded())

    def __len__(self) -> int:
        return len(self._loaded())


CATALOGUE: Mapping[str, GameEntry] = Catalogue()


def entry(name: str) -> GameEntry:
    """The catalogue entry of a game; KeyError for unknown names."""
    return CATALOGUE[name]


def played_by(service: Service) -> frozenset[str]:
    """Names of the games a service plays."""
    return frozenset(name for name, game in CATALOGUE.items() if game.service == service)

"""The one catalogue of games: every fact about a game that code outside its engine needs.

The lobby, the engine and arbiter services, the clocks, the SDK, the CLI and
the terminal client all read these entries, so adding a game means one
package under ``shared/games`` and one entry here. The catalogue is pure data
(no gRPC): ``proto_enum`` names the ``stammtisch.v1.Game`` value, and
:mod:`shared.rpc.games` maps names to enum numbers outside the core.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
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


@dataclass(frozen=True)
class GameEntry:
    """One game as the rest of the system sees it."""

    #: The name used everywhere outside the proto: scenarios, keys, metrics, the CLI.
    name: str
    #: The ``stammtisch.v1.Game`` value's name.
    proto_enum: str
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
    options: tuple[Option, ...] = ()
    #: Options a table's next game takes over from the last game's final public view:
    #: option name -> view key.
    carried_over: Mapping[str, str] = field(default_factory=dict)

    @property
    def service(self) -> Service:
        """The service that plays the game: the arbiter for simultaneous games."""
        return "arbiter" if self.simultaneous else "engine"

    @property
    def package(self) -> str:
        """The package of the engine (its ``bots`` module lives beside it)."""
        return self.engine.partition(":")[0].rsplit(".", 1)[0]

    def option_defaults(self) -> dict[str, Any]:
        """Every option with its default (a fresh dict)."""
        return {option.name: option.default for option in self.options}


_FIRST_DEALER = "the seat that deals the first round"

CATALOGUE: Mapping[str, GameEntry] = MappingProxyType({entry.name: entry for entry in (
    GameEntry(
        name="willi", proto_enum="GAME_WILLI", engine="shared.games.willi.engine:Willi",
        min_seats=3, max_seats=4, default_seats=4, duplicate_deals=True),
    GameEntry(
        name="willi-stich", proto_enum="GAME_WILLI_STICH",
        engine="shared.games.stich.engine:WilliStich",
        min_seats=3, max_seats=6, default_seats=4, leave_and_chat=True, duplicate_deals=True,
        options=(
            Option("start_round", 1, "the first round played (1..19); the game always ends "
                                     "after round 19"),
            Option("first_dealer", 0, _FIRST_DEALER + " played; the deal passes on into the "
                                      "table's next game"),
        ),
        carried_over={"first_dealer": "next_dealer"}),
    GameEntry(
        name="wie-waldi", proto_enum="GAME_WIE_WALDI", engine="shared.games.waldi.engine:WieWaldi",
        min_seats=2, max_seats=4, default_seats=3, simultaneous=True,
        options=(
            # A round ends by Stop within about two minutes of quick play; the limit ends one
            # that never would, so that every game ends: at most 3 rounds times the limit.
            Option("round_seconds", 180, "time limit of a round in seconds (above 0, at most "
                                         "3600); null, for the pure engine only: no limit",
                   types=(int, float)),
        )),
    GameEntry(
        name="willi-wacker", proto_enum="GAME_WILLI_WACKER",
        engine="shared.games.wacker.engine:WilliWacker",
        min_seats=3, max_seats=6, default_seats=4,
        options=(
            Option("first_dealer", 0, _FIRST_DEALER),
            Option("target", 200, "the game ends after the round in which a total reaches it"),
            Option("max_rounds", 100, "safety net: the game also ends after this round"),
        )),
)})


def entry(name: str) -> GameEntry:
    """The catalogue entry of a game; KeyError for unknown names."""
    return CATALOGUE[name]


def played_by(service: Service) -> frozenset[str]:
    """Names of the games a service plays."""
    return frozenset(name for name, game in CATALOGUE.items() if game.service == service)

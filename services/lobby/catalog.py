"""The games a table can host and how its options are checked, from the game catalogue.

Seat ranges, leave and chat, and carried-over options come from
:mod:`shared.games.catalog`; options are validated by creating the engine once
with them, so the lobby never keeps its own copy of any game's rules.
"""

from __future__ import annotations

from typing import Any

from shared.api.stammtisch.v1 import common_pb2
from shared.games.base import Game
from shared.games.catalog import CATALOGUE, entry
from shared.games.errors import SetupError
from shared.games.registry import bot_levels, engine_class
from shared.rpc.errors import invalid
from shared.rpc.games import enum_names, name_of

#: TableOptions fields that are options of some game in the catalogue (turn_seconds
#: belongs to the table; options without a field can only keep their default).
ENGINE_OPTIONS = tuple(field.name for field in common_pb2.TableOptions.DESCRIPTOR.fields
                       if any(option.name == field.name for game in CATALOGUE.values()
                              for option in game.options))
MAX_TURN_SECONDS = 3600
DEFAULT_BOT = "heuristic"


def game_name(game: int, *, allow_any: bool = False) -> str | None:
    """The engine name of a Game enum; None for GAME_UNSPECIFIED when ``allow_any``."""
    if game == common_pb2.GAME_UNSPECIFIED and allow_any:
        return None
    name = name_of(game)
    if name is None:
        raise invalid(f"game must be one of {enum_names()}")
    return name


def check_seat_count(game: str, seats: int) -> int:
    """A seat count the game supports, else INVALID_ARGUMENT."""
    known = entry(game)
    if not known.min_seats <= seats <= known.max_seats:
        raise invalid(f"{game} is played by {known.min_seats} to {known.max_seats} seats, "
                      f"got {seats}")
    return seats


def engine_options(options: common_pb2.TableOptions) -> dict[str, Any]:
    """The engine options the client set (unset ones take the game's defaults)."""
    return {name: getattr(options, name) for name in ENGINE_OPTIONS
            if options.HasField(name)}  # type: ignore[arg-type]


def turn_seconds(options: common_pb2.TableOptions, default: float) -> float:
    """Seconds per decision: the client's choice, else the deployment's; 0 means no clock."""
    if not options.HasField("turn_seconds"):
        return default
    if not 0 <= options.turn_seconds <= MAX_TURN_SECONDS:
        raise invalid(f"turn_seconds must be 0 (no clock) to {MAX_TURN_SECONDS}")
    return float(options.turn_seconds)


def new_game(game: str, seats: int, options: dict[str, Any], seed: int) -> Game:
    """Create the engine; options it refuses are INVALID_ARGUMENT with the engine's reason."""
    try:
        return engine_class(game).new(seats, options, seed)
    except SetupError as err:
        raise invalid(f"{game}: {err}") from err


def bot_level(game: str, level: str) -> str:
    """A bot level the game has ("" is the default), else INVALID_ARGUMENT."""
    level = level or DEFAULT_BOT
    levels = bot_levels(game)
    if level not in levels:
        raise invalid(f"bot level must be one of {', '.join(sorted(levels))}, got {level!r}")
    return level


def options_proto(options: dict[str, Any], turn: float) -> common_pb2.TableOptions:
    """TableOptions as clients see them."""
    known = {name: value for name, value in options.items() if name in ENGINE_OPTIONS}
    return common_pb2.TableOptions(**known, turn_seconds=round(turn))


def carried_over(game: str, final: Game) -> dict[str, Any]:
    """Options the table's next game takes over from the last one's final public state.

    Willi Stich: the deal passes on into the next game (RULES.md, "next_dealer").
    """
    view = final.view(None)
    return {option: view[key] for option, key in entry(game).carried_over.items()
            if view.get(key) is not None}


def has_leave_and_chat(game: str) -> bool:
    """Whether the game's rules have their own ``leave`` and ``chat`` actions."""
    return entry(game).leave_and_chat

"""The games a table can host and how its options are checked: the engines decide.

Options are validated by creating the engine once with them, so the lobby never
keeps its own copy of each game's option rules.
"""

from __future__ import annotations

from typing import Any

from shared.api.stammtisch.v1 import common_pb2
from shared.games.base import Game
from shared.games.errors import SetupError
from shared.games.registry import bot_levels, engine_class
from shared.rpc.errors import invalid

GAME_NAMES: dict[common_pb2.Game.ValueType, str] = {
    common_pb2.GAME_WILLI: "willi",
    common_pb2.GAME_WILLI_STICH: "willi-stich",
    common_pb2.GAME_WIE_WALDI: "wie-waldi",
    common_pb2.GAME_WILLI_WACKER: "willi-wacker",
}
GAME_ENUMS: dict[str, common_pb2.Game.ValueType] = {name: number for number, name in GAME_NAMES.items()}

#: TableOptions fields that are engine options (turn_seconds belongs to the table).
ENGINE_OPTIONS = ("first_dealer", "start_round", "round_seconds", "target")
MAX_TURN_SECONDS = 3600
DEFAULT_BOT = "heuristic"


def game_name(game: int, *, allow_any: bool = False) -> str | None:
    """The engine name of a Game enum; None for GAME_UNSPECIFIED when ``allow_any``."""
    if game == common_pb2.GAME_UNSPECIFIED and allow_any:
        return None
    if game not in GAME_NAMES:  # type: ignore[comparison-overlap]
        raise invalid("game must be one of GAME_WILLI, GAME_WILLI_STICH, GAME_WIE_WALDI, "
                      "GAME_WILLI_WACKER")
    return GAME_NAMES[game]  # type: ignore[index]


def check_seat_count(game: str, seats: int) -> int:
    """A seat count the game supports, else INVALID_ARGUMENT."""
    cls = engine_class(game)
    if not cls.min_seats <= seats <= cls.max_seats:
        raise invalid(f"{game} is played by {cls.min_seats} to {cls.max_seats} seats, got {seats}")
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
    if game == "willi-stich":
        next_dealer = final.view(None).get("next_dealer")
        return {} if next_dealer is None else {"first_dealer": next_dealer}
    return {}


#: Games whose rules have their own ``leave`` and ``chat`` actions (RULES.md of Willi Stich):
#: there a leaving seat leaves the game by rule, and table talk during a game is a game action.
RULES_LEAVE_AND_CHAT = frozenset({"willi-stich"})

"""The games a table can host, how its options are checked, and the catalogue as ListGames
sends it, all from the game catalogue.

Seat ranges, leave and chat, option specs and carried-over options come from
:mod:`shared.games.catalog`; options are checked against the game's option specs
and then by creating the engine once with them, so the lobby never keeps its own
copy of any game's rules.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from google.protobuf import json_format, struct_pb2

from shared.api.stammtisch.v1 import common_pb2, lobby_pb2
from shared.games.base import Game, check_options
from shared.games.catalog import CATALOGUE, GameEntry, Option, entry
from shared.games.errors import SetupError
from shared.games.registry import bot_levels, engine_class
from shared.rpc.catalog import PLAY_SERVICES
from shared.rpc.errors import invalid

#: A week: clocks of minutes to days are "play by notification" (services/clubs/turns.py).
MAX_TURN_SECONDS = 7 * 86_400
DEFAULT_BOT = "heuristic"
#: The JSON type of each Python type an option may have (GameOption.types).
_JSON_TYPES = {bool: "boolean", int: "integer", float: "number", str: "string", list: "array",
               dict: "object"}


def check_seat_count(game: str, seats: int) -> int:
    """A seat count the game supports, else INVALID_ARGUMENT."""
    known = entry(game)
    if not known.min_seats <= seats <= known.max_seats:
        raise invalid(f"{game} is played by {known.min_seats} to {known.max_seats} seats, "
                      f"got {seats}")
    return seats


def game_options(game: str, options: common_pb2.TableOptions) -> dict[str, Any]:
    """The game's options the client named (the others take their defaults), checked against
    the game's option specs: INVALID_ARGUMENT naming the option for an unknown name, a null,
    a wrong type or a value out of bounds. An integral number is an int for an int option."""
    specs = {option.name: option for option in entry(game).options}
    chosen: dict[str, Any] = {}
    for name, value in json_format.MessageToDict(options.game_options).items():
        if value is None:
            raise invalid(f"option {name!r} must not be null (leave it out for its default)")
        option = specs.get(name)  # an unknown name is refused by check_options, naming the options
        integral = option is not None and isinstance(value, float) and _integral(value, option)
        chosen[name] = int(value) if integral else value
    try:
        check_options(chosen, specs.values())
    except SetupError as err:
        raise invalid(f"{game}: {err}") from err
    return chosen


def _integral(value: float, option: Option) -> bool:
    """A JSON number (a double) that stands for an int of an option taking ints."""
    return value.is_integer() and int in (option.types or (type(option.default),))


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
    """TableOptions as clients see them: the game's options as chosen, and the turn clock."""
    proto = common_pb2.TableOptions(turn_seconds=round(turn))
    proto.game_options.update(options)
    return proto


def carried_over(game: str, final: Game) -> dict[str, Any]:
    """Options the table's next game takes over from the last one's final public state.

    A game that passes the deal on names the option and the view key in its entry.
    """
    view = final.view(None)
    return {option: view[key] for option, key in entry(game).carried_over.items()
            if view.get(key) is not None}


def has_leave_and_chat(game: str) -> bool:
    """Whether the game's rules have their own ``leave`` and ``chat`` actions."""
    return entry(game).leave_and_chat


@functools.cache
def games_proto() -> lobby_pb2.ListGamesResponse:
    """Every game of the catalogue as ListGames answers (made once: the catalogue is fixed
    while the process runs)."""
    return lobby_pb2.ListGamesResponse(games=[_game_proto(CATALOGUE[name]) for name in sorted(CATALOGUE)])


def _game_proto(game: GameEntry) -> lobby_pb2.GameInfo:
    schemas = game.resource("schemas")
    return lobby_pb2.GameInfo(
        name=game.name, title=game.title, min_seats=game.min_seats, max_seats=game.max_seats,
        default_seats=game.default_seats, simultaneous=game.simultaneous,
        service=PLAY_SERVICES[game.service].full_name,
        options=[_option_proto(option) for option in game.options],
        duplicate_deals=game.duplicate_deals, bot_levels=sorted(bot_levels(game.name)),
        leave_and_chat=game.leave_and_chat,
        schemas_json={kind: json.dumps(game.schema(kind)) for kind in
                      sorted(item.name.removesuffix(".schema.json") for item in schemas.iterdir()
                             if item.name.endswith(".schema.json"))} if schemas.is_dir() else {})


def _option_proto(option: Option) -> lobby_pb2.GameOption:
    kinds = option.types or (() if option.default is None else (type(option.default),))
    return lobby_pb2.GameOption(
        name=option.name, doc=option.doc,
        default_value=json_format.ParseDict(option.default, struct_pb2.Value()),
        types=[_JSON_TYPES.get(kind, kind.__name__) for kind in kinds],
        minimum=option.minimum, maximum=option.maximum)

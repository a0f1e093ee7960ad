"""The catalogue's games as ``stammtisch.v1.Game`` values: the one name <-> enum map.

Kept outside ``shared/games`` so the core never imports gRPC or protobuf; the
catalogue names each game's enum value and this module looks the numbers up.
"""

from __future__ import annotations

from shared.api.stammtisch.v1 import common_pb2
from shared.games.catalog import CATALOGUE

#: Game name ("willi-stich") -> enum value, in catalogue order.
GAME_ENUMS: dict[str, common_pb2.Game.ValueType] = {name: common_pb2.Game.Value(game.proto_enum)
                                   for name, game in CATALOGUE.items()}
#: Enum value -> game name.
GAME_NAMES: dict[common_pb2.Game.ValueType, str] = {number: name for name, number in GAME_ENUMS.items()}


def name_of(game: int) -> str | None:
    """The game name of an enum value; None for GAME_UNSPECIFIED and unknown numbers."""
    return GAME_NAMES.get(game)  # type: ignore[call-overload]


def enum_names() -> str:
    """The enum names of every game, for error messages ("GAME_WILLI, GAME_WILLI_STICH, ...")."""
    return ", ".join(game.proto_enum for game in CATALOGUE.values())

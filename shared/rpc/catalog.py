"""The catalogue as the API names it: games by their catalogue name, and the gRPC service
that plays each (the catalogue's "engine" or "arbiter").

The API has no list of games of its own: a name is checked against the installed
catalogue, so a newly installed game is served with no proto or code change.
"""

from __future__ import annotations

from collections.abc import Mapping

from google.protobuf import descriptor, message, message_factory

from shared.api.stammtisch.v1 import arbiter_pb2, engine_pb2
from shared.games.catalog import CATALOGUE, Service
from shared.rpc.errors import invalid

#: The proto service that plays the games of each catalogue service (the same calls on both).
PLAY_SERVICES: Mapping[Service, descriptor.ServiceDescriptor] = {
    "engine": engine_pb2.DESCRIPTOR.services_by_name["EngineService"],
    "arbiter": arbiter_pb2.DESCRIPTOR.services_by_name["ArbiterService"],
}


def game_named(name: str) -> str:
    """``name`` when the catalogue has that game, else INVALID_ARGUMENT naming the known games."""
    if name not in CATALOGUE:
        raise invalid(f"unknown game {name!r}; the games are {', '.join(sorted(CATALOGUE))}")
    return name


def game_or_all(name: str) -> str | None:
    """A filter of games: None ("" in the request) for every game, else a known game's name."""
    return game_named(name) if name else None


def play_request(service: Service, method: str, **fields: object) -> message.Message:
    """The request message of a play call ("Act", "GetView", "Subscribe", "Play") of the proto
    service that plays ``service``'s games: clients build either service's requests alike."""
    input_type = PLAY_SERVICES[service].methods_by_name[method].input_type
    built: message.Message = message_factory.GetMessageClass(input_type)(**fields)
    return built

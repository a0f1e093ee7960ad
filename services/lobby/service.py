"""The lobby's gRPC servicer."""

from __future__ import annotations

import uuid

import grpc
from google.protobuf.timestamp_pb2 import Timestamp

from services.base import Service
from shared.api.stammtisch.v1 import lobby_pb2, lobby_pb2_grpc
from shared.rpc.auth import TokenSigner
from shared.rpc.errors import invalid
from shared.runtime import Runtime

MAX_NAME = 24


class LobbyServicer(lobby_pb2_grpc.LobbyServiceServicer):
    """Login issues tokens; table management builds on the stored lobby state."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        settings = runtime.settings
        self.signer = TokenSigner(settings.token_secret, settings.token_ttl_seconds)

    async def Login(self, request: lobby_pb2.LoginRequest,
                    context: grpc.aio.ServicerContext) -> lobby_pb2.LoginResponse:
        """A guest login: any printable name of 1 to 24 characters gets a fresh player id."""
        name = request.name.strip()
        if not 1 <= len(name) <= MAX_NAME or not name.isprintable():
            raise invalid(f"name must be 1 to {MAX_NAME} printable characters")
        player_id = uuid.uuid4().hex
        token, identity = self.signer.issue(player_id, name)
        expires = Timestamp()
        expires.FromSeconds(int(identity.expires_at))
        return lobby_pb2.LoginResponse(token=token, player_id=player_id, expires_at=expires)


class LobbyService(Service):
    """Owns players, tables and seats."""

    name = "lobby"
    full_name = "stammtisch.v1.LobbyService"

    def register(self, server: grpc.aio.Server) -> None:
        lobby_pb2_grpc.add_LobbyServiceServicer_to_server(LobbyServicer(self.runtime), server)


def create(runtime: Runtime) -> Service:
    """Entry point for the runner."""
    return LobbyService(runtime)

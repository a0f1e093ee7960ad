"""The arbiter: real-time Wie Waldi tables ordered by atomic commits in Redis."""

from __future__ import annotations

from collections.abc import AsyncIterator

import grpc

from services.base import Service
from services.tableplay import PlayService, TablePlay
from shared.api.stammtisch.v1 import arbiter_pb2, arbiter_pb2_grpc
from shared.rpc.auth import caller
from shared.runtime import Runtime

GAMES = frozenset({"wie-waldi"})


class ArbiterServicer(arbiter_pb2_grpc.ArbiterServiceServicer):
    """Thin gRPC shell over :class:`TablePlay`; races are settled by the commit order."""

    def __init__(self, play: TablePlay) -> None:
        self.play = play

    async def Act(self, request: arbiter_pb2.ArbiterServiceActRequest,
                  context: grpc.aio.ServicerContext) -> arbiter_pb2.ArbiterServiceActResponse:
        update = await self.play.act(caller(), request.table_id, request.action_id, request.action)
        return arbiter_pb2.ArbiterServiceActResponse(update=update)

    async def GetView(self, request: arbiter_pb2.ArbiterServiceGetViewRequest,
                      context: grpc.aio.ServicerContext) -> arbiter_pb2.ArbiterServiceGetViewResponse:
        update = await self.play.view(caller(), request.table_id)
        return arbiter_pb2.ArbiterServiceGetViewResponse(update=update)

    async def Subscribe(self, request: arbiter_pb2.ArbiterServiceSubscribeRequest,  # type: ignore[override]
                        context: grpc.aio.ServicerContext,
                        ) -> AsyncIterator[arbiter_pb2.ArbiterServiceSubscribeResponse]:
        async for update in self.play.subscribe(caller(), request.table_id, request.after_seq):
            yield arbiter_pb2.ArbiterServiceSubscribeResponse(update=update)


class ArbiterService(PlayService):
    """Wie Waldi tables: every seat acts at once; the round time limit and bots run on clocks."""

    name = "arbiter"
    full_name = "stammtisch.v1.ArbiterService"
    games = GAMES

    def register(self, server: grpc.aio.Server) -> None:
        arbiter_pb2_grpc.add_ArbiterServiceServicer_to_server(ArbiterServicer(self.play), server)


def create(runtime: Runtime) -> Service:
    """Entry point for the runner."""
    return ArbiterService(runtime)

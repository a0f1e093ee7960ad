"""The engine: turn-based tables of Willi, Willi Stich and Willi Wacker."""

from __future__ import annotations

from collections.abc import AsyncIterator

import grpc

from services.host.base import Service
from services.play.table_play import (
    PlayService,
    PlayStep,
    TablePlay,
    play_response,
    with_update,
    with_updates,
)
from shared.api.stammtisch.v1 import engine_pb2, engine_pb2_grpc
from shared.games.catalog import played_by
from shared.infra.runtime import Runtime
from shared.rpc.auth import caller


class EngineServicer(engine_pb2_grpc.EngineServiceServicer):
    """Thin gRPC shell over :class:`TablePlay`; updates are answered as wire bytes of the
    response messages (services/play/updates.py)."""

    def __init__(self, play: TablePlay) -> None:
        self.play = play

    async def Act(self, request: engine_pb2.ActRequest,  # type: ignore[override]
                  context: grpc.aio.ServicerContext) -> bytes:
        update = await self.play.act(caller(), request.table_id, request.action_id, request.action)
        return with_update(engine_pb2.ActResponse, update)

    async def GetView(self, request: engine_pb2.GetViewRequest,  # type: ignore[override]
                      context: grpc.aio.ServicerContext) -> bytes:
        return with_update(engine_pb2.GetViewResponse, await self.play.view(caller(), request.table_id))

    async def Subscribe(self, request: engine_pb2.SubscribeRequest,  # type: ignore[override]
                        context: grpc.aio.ServicerContext) -> AsyncIterator[bytes]:
        async for batch in self.play.subscribe(caller(), request.table_id, request.after_seq,
                                               request.max_batch, request.last_view_only):
            yield with_updates(engine_pb2.SubscribeResponse, batch.updates)

    async def Play(self, request_iterator: AsyncIterator[engine_pb2.PlayRequest],  # type: ignore[override]
                   context: grpc.aio.ServicerContext) -> AsyncIterator[bytes | engine_pb2.PlayResponse]:
        await context.send_initial_metadata(())  # the call is accepted: clients may write (PlayStream)
        async for item in self.play.play_stream(caller(), _steps(request_iterator)):
            yield play_response(item, engine_pb2.PlayResponse)


async def _steps(requests: AsyncIterator[engine_pb2.PlayRequest]) -> AsyncIterator[PlayStep]:
    async for request in requests:
        yield PlayStep(request.table_id, request.after_seq, request.action_id,
                       request.action if request.HasField("action") else None,
                       max_batch=request.max_batch,
                       answers_with_updates=request.answers_with_updates,
                       last_view_only=request.last_view_only)


class EngineService(PlayService):
    """Turn-based tables: Act, GetView, Subscribe, turn clocks and bot seats."""

    name = "engine"
    full_name = "stammtisch.v1.EngineService"
    games = played_by("engine")

    def register(self, server: grpc.aio.Server) -> None:
        engine_pb2_grpc.add_EngineServiceServicer_to_server(EngineServicer(self.play), server)


def create(runtime: Runtime) -> Service:
    """Entry point for the runner."""
    return EngineService(runtime)

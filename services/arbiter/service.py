"""The arbiter: real-time Wie Waldi tables ordered by atomic commits in Redis.

Every seat acts whenever it likes; whichever commit lands first in Redis wins,
from any replica. Two things make that order fair in real time: an ``attach``
may carry ``at`` (a lost race is ``STALE``, never a card on a different end),
and an action may carry the ``round`` it was meant for, so that nothing sent
before a Stop lands in the next round.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import grpc

from services.host.base import Service
from services.play.table_play import (
    Guard,
    PlayService,
    PlayStep,
    TablePlay,
    play_response,
    with_update,
    with_updates,
)
from shared.api.stammtisch.v1 import arbiter_pb2, arbiter_pb2_grpc
from shared.games.catalog import played_by
from shared.games.errors import ErrorCode, RuleError
from shared.infra.runtime import Runtime
from shared.rpc.auth import caller
from shared.rpc.errors import invalid
from shared.tables.records import CommitRecord


def same_round(round_no: int) -> Guard:
    """Refuse (STALE) an action meant for a round the table is no longer in."""
    if round_no < 1:
        raise invalid("round must be the round of your view (1 or more)")

    def check(head: CommitRecord) -> None:
        now = head.engine().current_round
        if now != round_no:
            raise RuleError(ErrorCode.STALE, f"the table is in round {now}, not {round_no}")

    return check


class ArbiterServicer(arbiter_pb2_grpc.ArbiterServiceServicer):
    """Thin gRPC shell over :class:`TablePlay`; races are settled by the commit order.

    Updates are answered as wire bytes of the response messages (services/play/updates.py).
    """

    def __init__(self, play: TablePlay) -> None:
        self.play = play

    async def Act(self, request: arbiter_pb2.ArbiterServiceActRequest,  # type: ignore[override]
                  context: grpc.aio.ServicerContext) -> bytes:
        guard = same_round(request.round) if request.HasField("round") else None
        update = await self.play.act(caller(), request.table_id, request.action_id, request.action,
                                     guard)
        return with_update(arbiter_pb2.ArbiterServiceActResponse, update)

    async def GetView(self, request: arbiter_pb2.ArbiterServiceGetViewRequest,  # type: ignore[override]
                      context: grpc.aio.ServicerContext) -> bytes:
        update = await self.play.view(caller(), request.table_id)
        return with_update(arbiter_pb2.ArbiterServiceGetViewResponse, update)

    async def Subscribe(self, request: arbiter_pb2.ArbiterServiceSubscribeRequest,  # type: ignore[override]
                        context: grpc.aio.ServicerContext) -> AsyncIterator[bytes]:
        async for batch in self.play.subscribe(caller(), request.table_id, request.after_seq,
                                               request.max_batch, request.last_view_only):
            yield with_updates(arbiter_pb2.ArbiterServiceSubscribeResponse, batch.updates)

    async def Play(self, request_iterator: AsyncIterator[arbiter_pb2.ArbiterServicePlayRequest],  # type: ignore[override]
                   context: grpc.aio.ServicerContext,
                   ) -> AsyncIterator[bytes | arbiter_pb2.ArbiterServicePlayResponse]:
        await context.send_initial_metadata(())  # the call is accepted: clients may write (PlayStream)
        async for item in self.play.play_stream(caller(), _steps(request_iterator)):
            yield play_response(item, arbiter_pb2.ArbiterServicePlayResponse)


async def _steps(requests: AsyncIterator[arbiter_pb2.ArbiterServicePlayRequest]) -> AsyncIterator[PlayStep]:
    async for request in requests:
        yield PlayStep(request.table_id, request.after_seq, request.action_id,
                       request.action if request.HasField("action") else None,
                       same_round(request.round) if request.HasField("round") else None,
                       request.max_batch, request.answers_with_updates, request.last_view_only)


class ArbiterService(PlayService):
    """Wie Waldi tables: every seat acts at once; the round time limit and bots run on clocks."""

    name = "arbiter"
    full_name = "stammtisch.v1.ArbiterService"
    games = played_by("arbiter")

    def register(self, server: grpc.aio.Server) -> None:
        arbiter_pb2_grpc.add_ArbiterServiceServicer_to_server(ArbiterServicer(self.play), server)


def create(runtime: Runtime) -> Service:
    """Entry point for the runner."""
    return ArbiterService(runtime)

"""The one servicer of both play services: EngineService and ArbiterService have the same
calls (their messages differ only in name), so one implementation serves either, and the
catalogue's ``service`` of a game says which one plays its tables.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any, ClassVar

import grpc
from google.protobuf import descriptor, message_factory

from services.host.base import Service
from services.play.table_play import (
    Guard,
    PlayStep,
    TablePlay,
    play_response,
    with_update,
    with_updates,
)
from shared.api.stammtisch.v1 import arbiter_pb2_grpc, engine_pb2_grpc
from shared.games.catalog import Service as ServiceName
from shared.games.catalog import played_by
from shared.games.errors import ErrorCode, RuleError
from shared.infra.runtime import Runtime
from shared.infra.tasks import not_cancelled
from shared.obs.metrics import (
    COMMIT_RETRIES,
    LIVE_TABLES,
    TABLES_CLOSED,
    TURN_CLOCK_EXPIRIES,
    count_from_zero,
)
from shared.rpc.auth import caller
from shared.rpc.catalog import PLAY_SERVICES
from shared.rpc.errors import invalid
from shared.tables.clocks import CLOSED_IDLE
from shared.tables.records import CommitRecord

#: The generated function that adds a servicer of each play service to a server.
_ADD_SERVICER: dict[ServiceName, Callable[[Any, grpc.aio.Server], None]] = {
    "engine": engine_pb2_grpc.add_EngineServiceServicer_to_server,
    "arbiter": arbiter_pb2_grpc.add_ArbiterServiceServicer_to_server,
}


def same_round(round_no: int) -> Guard:
    """Refuse (STALE) an action meant for a round the table is no longer in (the engine
    contract's ``current_round``): nothing sent for a round that ended lands in the next."""
    if round_no < 1:
        raise invalid("round must be the round of your view (1 or more)")

    def check(head: CommitRecord) -> None:
        now = head.engine().current_round
        if now != round_no:
            raise RuleError(ErrorCode.STALE, f"the table is in round {now}, not {round_no}")

    return check


def round_guard(request: Any) -> Guard | None:
    """The guard of an Act or Play request's optional ``round`` (None when it names none)."""
    return same_round(request.round) if request.HasField("round") else None


class PlayServicer:
    """Act, GetView, Subscribe and Play of either play service over :class:`TablePlay`; updates
    are answered as wire bytes of the service's response messages (services/play/updates.py)."""

    def __init__(self, play: TablePlay, proto: descriptor.ServiceDescriptor) -> None:
        self.play = play
        responses = {method.name: message_factory.GetMessageClass(method.output_type)
                     for method in proto.methods}
        self._act, self._view = responses["Act"], responses["GetView"]
        self._subscribe, self._play = responses["Subscribe"], responses["Play"]

    async def Act(self, request: Any, context: grpc.aio.ServicerContext) -> bytes:
        update = await self.play.act(caller(), request.table_id, request.action_id, request.action,
                                     round_guard(request))
        return with_update(self._act, update)

    async def GetView(self, request: Any, context: grpc.aio.ServicerContext) -> bytes:
        return with_update(self._view, await self.play.view(caller(), request.table_id))

    async def Subscribe(self, request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[bytes]:
        async for batch in self.play.subscribe(caller(), request.table_id, request.after_seq,
                                               request.max_batch, request.last_view_only):
            yield with_updates(self._subscribe, batch.updates)

    async def Play(self, request_iterator: AsyncIterator[Any],
                   context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
        await context.send_initial_metadata(())  # the call is accepted: clients may write (PlayStream)
        async for item in self.play.play_stream(caller(), _steps(request_iterator)):
            yield play_response(item, self._play)


async def _steps(requests: AsyncIterator[Any]) -> AsyncIterator[PlayStep]:
    async for request in requests:
        yield PlayStep(request.table_id, request.after_seq, request.action_id,
                       request.action if request.HasField("action") else None,
                       round_guard(request), request.max_batch, request.answers_with_updates,
                       request.last_view_only)


class PlayService(Service):
    """A service that plays the tables of the catalogue's games whose ``service`` is its
    ``name``: one :class:`PlayServicer` on its proto service, clocks and the results relay."""

    name: ClassVar[ServiceName]

    def __init__(self, runtime: Runtime) -> None:
        super().__init__(runtime)
        self.games = played_by(self.name)
        self.play = TablePlay(runtime, self.games, self.name, runtime.settings)

    def register(self, server: grpc.aio.Server) -> None:
        _ADD_SERVICER[self.name](PlayServicer(self.play, PLAY_SERVICES[self.name]), server)

    async def start(self) -> None:
        """Clocks (turn deadlines, bots, round limits) and, once per process, the results relay
        (the outbox is one for the deployment; a second relay in the process adds nothing)."""
        for counter in (COMMIT_RETRIES, TURN_CLOCK_EXPIRIES):
            count_from_zero(counter, [(game,) for game in self.games])
        count_from_zero(TABLES_CLOSED, [(game, CLOSED_IDLE) for game in self.games])
        for worker in self.play.clocks:
            self.spawn(worker.run_forever(), "clock")
        if self.runtime.claim("results-relay"):
            self.spawn(self.play.writer.announcer.relay_forever(), "results-relay")
        self.spawn(self._count_live_tables(), "live-tables")
        self.spawn(self.play.watchers.refresh_forever(), "watchers")

    async def _count_live_tables(self, interval: float = 5.0) -> None:
        """Report running games per game (the same global count from every replica)."""
        while not_cancelled():
            for game in self.games:
                LIVE_TABLES.labels(game).set(await self.play.store.live_tables(game))
            await asyncio.sleep(interval)

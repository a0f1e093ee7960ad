"""A service's share of every game result: one durable JetStream consumer for all its replicas.

A push consumer with a deliver group rather than a pull loop: nothing is left
mid-fetch at shutdown (nats-py can lose a cancellation inside fetch or stall
the connection's drain after one), and unsubscribing is the whole stop. Each
result goes to one replica; a result not acknowledged (a replica died) goes to
another after the ack wait, so handlers must be idempotent.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable

from nats.aio.msg import Msg
from nats.js import JetStreamContext
from nats.js.api import AckPolicy, ConsumerConfig
from nats.js.errors import BadRequestError

from shared.infra.runtime import Runtime, results_stream

#: JetStream's answer when another replica created the same durable consumer a moment earlier.
_CONSUMER_NAME_IN_USE = 10013


async def join_results(runtime: Runtime, durable: str, ack_wait: float,
                       handle: Callable[[Msg], Awaitable[None]]) -> JetStreamContext.PushSubscription:
    """Join the replicas' durable push consumer of game results, creating it on first use; replicas
    that start at once may race to create it, and the loser joins the one the winner made."""
    def join() -> Awaitable[JetStreamContext.PushSubscription]:
        return runtime.js.subscribe(
            runtime.subject_pattern("results", "*", "game"), queue=durable, durable=durable,
            stream=results_stream(runtime.settings).name, cb=handle, manual_ack=True,
            config=ConsumerConfig(ack_policy=AckPolicy.EXPLICIT, ack_wait=ack_wait))

    try:
        return await join()
    except BadRequestError as err:
        if err.err_code != _CONSUMER_NAME_IN_USE:
            raise
    return await join()  # the consumer exists now


class GameResultGroup:
    """Delivers ``<prefix>.results.*.game`` to ``handle``, shared by the replicas named ``durable``."""

    def __init__(self, runtime: Runtime, durable: str, ack_wait: float,
                 handle: Callable[[Msg], Awaitable[None]]) -> None:
        self.runtime = runtime
        self.durable = durable
        self.ack_wait = ack_wait
        self.handle = handle
        self._subscription: JetStreamContext.PushSubscription | None = None

    async def start(self) -> None:
        """Join the replicas' shared durable consumer (created on first use)."""
        self._subscription = await join_results(self.runtime, self.durable, self.ack_wait, self.handle)

    async def stop(self) -> None:
        """Stop receiving; unacknowledged results go to another replica after the ack wait."""
        if self._subscription is not None:
            with contextlib.suppress(Exception):
                await self._subscription.unsubscribe()
            self._subscription = None

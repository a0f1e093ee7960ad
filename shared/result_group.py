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

from shared.runtime import Runtime, results_stream


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
        self._subscription = await self.runtime.js.subscribe(
            self.runtime.subject_pattern("results", "*", "game"), queue=self.durable,
            durable=self.durable, stream=results_stream(self.runtime.settings).name, cb=self.handle,
            manual_ack=True, config=ConsumerConfig(ack_policy=AckPolicy.EXPLICIT, ack_wait=self.ack_wait))

    async def stop(self) -> None:
        """Stop receiving; unacknowledged results go to another replica after the ack wait."""
        if self._subscription is not None:
            with contextlib.suppress(Exception):
                await self._subscription.unsubscribe()
            self._subscription = None

"""The durable JetStream pull consumer that feeds finished games into the score store.

Every scoring replica pulls from the same durable consumer, so JetStream
splits the results between them and remembers what was acknowledged across
restarts. A message is acknowledged only after its game is in Redis; a crash
in between means a redelivery, which the store recognises by the result id.
"""

from __future__ import annotations

import asyncio
import contextlib

from nats.aio.msg import Msg
from nats.errors import Error as NatsError
from nats.js import JetStreamContext
from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy
from structlog.contextvars import bound_contextvars

from services.scoring.finished import BadResult, FinishedGame
from services.scoring.store import ScoreStore
from shared.infra.runtime import Runtime, results_stream
from shared.obs.logs import get_logger
from shared.obs.metrics import RESULTS_CONSUMED

log = get_logger("scoring.consumer")

#: The one durable consumer name all scoring replicas share.
DURABLE = "scoring"
#: Messages per pull; small, so that replicas share a burst of results.
BATCH = 20
#: How long one pull waits for messages before asking again.
PULL_SECONDS = 1.0
#: Unacknowledged messages come back after this long (a replica died mid-message).
ACK_WAIT_SECONDS = 10.0
#: Pause before a failed message (Redis unreachable, contention) is tried again.
RETRY_SECONDS = 1.0


def game_results_subject(runtime: Runtime) -> str:
    """Game results only: round results carry nothing scoring keeps."""
    return runtime.subject_pattern("results", "*", "game")


class ResultsConsumer:
    """Pulls game results and records each exactly once."""

    def __init__(self, runtime: Runtime, store: ScoreStore) -> None:
        self.runtime = runtime
        self.store = store
        self._stopping = asyncio.Event()

    def stop(self) -> None:
        """End the pull loop at its next turn, even if a cancellation gets lost.

        (Python 3.11's ``asyncio.wait_for``, used inside nats-py's fetch, can
        swallow a cancellation that arrives together with a message.)
        """
        self._stopping.set()

    async def subscribe(self) -> JetStreamContext.PullSubscription:
        """Bind to the shared durable consumer, creating it on first use."""
        subject = game_results_subject(self.runtime)
        config = ConsumerConfig(durable_name=DURABLE, ack_policy=AckPolicy.EXPLICIT,
                                deliver_policy=DeliverPolicy.ALL, ack_wait=ACK_WAIT_SECONDS,
                                filter_subject=subject, max_ack_pending=1000)
        return await self.runtime.js.pull_subscribe(
            subject, durable=DURABLE, stream=results_stream(self.runtime.settings).name, config=config)

    async def run(self, subscription: JetStreamContext.PullSubscription) -> None:
        """Pull and record until stopped or cancelled; unacknowledged messages are handed back at once."""
        try:
            while not self._stopping.is_set():
                try:
                    batch = await subscription.fetch(BATCH, timeout=PULL_SECONDS)
                except TimeoutError:  # nothing came (nats-py raises its own subclass or asyncio's own)
                    continue
                except Exception:
                    log.exception("fetch_failed")
                    await asyncio.sleep(RETRY_SECONDS)
                    continue
                await self._handle_batch(batch)
        finally:
            # Unsubscribe rather than leave it to the connection's drain, which can wait its
            # full timeout on a pull subscription (nats-py's fetch takes messages without
            # marking them done); anything still unacknowledged is redelivered after ACK_WAIT.
            with contextlib.suppress(NatsError):
                await subscription.unsubscribe()

    async def _handle_batch(self, batch: list[Msg]) -> None:
        for index, msg in enumerate(batch):
            try:
                await self.handle(msg)
            except asyncio.CancelledError:
                with contextlib.suppress(NatsError):
                    for unfinished in batch[index:]:
                        await unfinished.nak()
                raise

    async def handle(self, msg: Msg) -> None:
        """Record one message's game, then acknowledge; malformed ones are dropped for good."""
        result_id = (msg.headers or {}).get("Nats-Msg-Id", "")
        with bound_contextvars(result_id=result_id):
            try:
                game = FinishedGame.from_message(result_id, msg.data)
            except BadResult as exc:
                log.error("result_rejected", subject=msg.subject, reason=str(exc))
                RESULTS_CONSUMED.labels("rejected").inc()
                await msg.term()
                return
            with bound_contextvars(table_id=game.table_id):
                await self._record(msg, game)

    async def _record(self, msg: Msg, game: FinishedGame) -> None:
        try:
            recorded = await self.store.record(game)
        except Exception:
            log.exception("result_not_recorded", delivery=msg.metadata.num_delivered)
            RESULTS_CONSUMED.labels("failed").inc()
            await msg.nak(delay=RETRY_SECONDS)
            return
        await msg.ack()
        outcome = "recorded" if recorded else "duplicate"
        RESULTS_CONSUMED.labels(outcome).inc()
        log.info(f"result_{outcome}", game=game.game, game_no=game.game_no)

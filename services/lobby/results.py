"""The lobby's durable consumer of game results: a finished game frees its table for the next.

All lobby replicas pull from one durable JetStream consumer, so each
``game_over`` is handled by one of them; handling is idempotent (a repeated
result finds the table no longer playing that game), so a redelivery after a
crash changes nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import json

import nats.errors
from nats.aio.msg import Msg
from nats.js import JetStreamContext
from nats.js.api import AckPolicy, ConsumerConfig

from services.lobby.series import GameSeries
from shared.logs import get_logger
from shared.runtime import Runtime, results_stream

log = get_logger("lobby.results")

DURABLE = "lobby-games"
BATCH = 20
RETRY_SECONDS = 2.0


class GameResults:
    """Pulls ``<prefix>.results.*.game`` and ends the lobby's side of each game."""

    def __init__(self, runtime: Runtime, series: GameSeries) -> None:
        self.runtime = runtime
        self.series = series
        self._stopping = asyncio.Event()

    def stop(self) -> None:
        """End the loop at its next turn, even if a cancellation is lost inside nats-py's fetch
        (its ``asyncio.wait_for`` can swallow one that arrives together with a message)."""
        self._stopping.set()

    async def run(self) -> None:
        """Consume until stopped or cancelled; connection trouble is retried."""
        subject = self.runtime.subject("results", "*", "game")
        while not self._stopping.is_set():
            try:
                subscription = await self.runtime.js.pull_subscribe(
                    subject, durable=DURABLE, stream=results_stream(self.runtime.settings).name,
                    config=ConsumerConfig(ack_policy=AckPolicy.EXPLICIT, ack_wait=30.0))
                try:
                    await self._pull(subscription)
                finally:
                    # Without this, a fetch cancelled at shutdown can stall the NATS drain for 30 s.
                    with contextlib.suppress(Exception):
                        await subscription.unsubscribe()
            except Exception:
                log.exception("results_consumer_failed")
                await asyncio.sleep(RETRY_SECONDS)

    async def _pull(self, subscription: JetStreamContext.PullSubscription) -> None:
        while not self._stopping.is_set():
            try:
                messages = await subscription.fetch(BATCH, timeout=1.0)
            except nats.errors.TimeoutError:
                continue
            for msg in messages:
                await _handle(msg, self.series)


async def _handle(msg: Msg, series: GameSeries) -> None:
    try:
        payload = json.loads(msg.data)
        table_id, game_no, seq = str(payload["table_id"]), int(payload["game_no"]), int(payload["seq"])
        event = dict(payload["event"])
    except (ValueError, KeyError, TypeError):
        log.error("bad_result_message", subject=msg.subject)
        await msg.term()
        return
    try:
        await series.finish(table_id, game_no, seq, event)
    except Exception:
        log.exception("game_result_failed", table_id=table_id, game_no=game_no)
        await msg.nak(delay=RETRY_SECONDS)
        return
    await msg.ack()

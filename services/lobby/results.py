"""The lobby's durable consumer of game results: a finished game frees its table for the next.

All lobby replicas share one durable JetStream consumer, so each
``game_over`` is handled by one of them; handling is idempotent (a repeated
result finds the table no longer playing that game), so a redelivery after a
crash changes nothing.
"""

from __future__ import annotations

import contextlib
import json

from nats.aio.msg import Msg
from nats.js import JetStreamContext
from nats.js.api import AckPolicy, ConsumerConfig

from services.lobby.series import GameSeries
from shared.logs import get_logger
from shared.runtime import Runtime, results_stream

log = get_logger("lobby.results")

DURABLE = "lobby-games"
RETRY_SECONDS = 2.0
ACK_WAIT_SECONDS = 30.0


class GameResults:
    """Ends the lobby's side of each game from ``<prefix>.results.*.game``.

    A push consumer with a deliver group rather than a pull loop: nothing is
    left mid-fetch at shutdown (nats-py can lose a cancellation inside fetch or
    stall the connection's drain after one), and unsubscribing is the whole stop.
    """

    def __init__(self, runtime: Runtime, series: GameSeries) -> None:
        self.runtime = runtime
        self.series = series
        self._subscription: JetStreamContext.PushSubscription | None = None

    async def start(self) -> None:
        """Join the lobby replicas' shared durable consumer (created on first use)."""
        self._subscription = await self.runtime.js.subscribe(
            self.runtime.subject_pattern("results", "*", "game"), queue=DURABLE, durable=DURABLE,
            stream=results_stream(self.runtime.settings).name, cb=self._on_message, manual_ack=True,
            config=ConsumerConfig(ack_policy=AckPolicy.EXPLICIT, ack_wait=ACK_WAIT_SECONDS))

    async def stop(self) -> None:
        """Stop receiving; unacknowledged results go to another replica after the ack wait."""
        if self._subscription is not None:
            with contextlib.suppress(Exception):
                await self._subscription.unsubscribe()
            self._subscription = None

    async def _on_message(self, msg: Msg) -> None:
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

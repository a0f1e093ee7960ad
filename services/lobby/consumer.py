"""The lobby's durable consumer of game results: a finished game frees its table for the next.

All lobby replicas share one durable JetStream consumer, so each
``game_over`` is handled by one of them; handling is idempotent (a repeated
result finds the table no longer playing that game), so a redelivery after a
crash changes nothing.
"""

from __future__ import annotations

import json

from nats.aio.msg import Msg

from services.lobby.series import GameSeries
from shared.infra.result_group import GameResultGroup
from shared.infra.runtime import Runtime
from shared.obs.logs import get_logger

log = get_logger("lobby.consumer")

DURABLE = "lobby-games"
RETRY_SECONDS = 2.0
ACK_WAIT_SECONDS = 30.0


class LobbyResults(GameResultGroup):
    """Ends the lobby's side of each game from ``<prefix>.results.*.game``."""

    def __init__(self, runtime: Runtime, series: GameSeries) -> None:
        super().__init__(runtime, DURABLE, ACK_WAIT_SECONDS, self._on_message)
        self.series = series

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

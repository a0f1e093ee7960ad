"""Scoring's durable consumer of game results: every finished game goes into the score store once.

All scoring replicas share one durable consumer (shared/infra/result_group.py), so JetStream
splits the results between them and remembers what was acknowledged across restarts. A result
is acknowledged only after its game is in Redis; a crash in between means a redelivery, which
the store recognises by the result id. A malformed result is terminated, never retried.
"""

from __future__ import annotations

from nats.aio.msg import Msg
from structlog.contextvars import bound_contextvars

from services.scoring.finished import BadResult, FinishedGame
from services.scoring.store import ScoreStore
from shared.infra.result_group import GameResultGroup
from shared.infra.runtime import Runtime
from shared.obs.logs import get_logger
from shared.obs.metrics import RESULTS_CONSUMED

log = get_logger("scoring.consumer")

#: The one durable consumer all scoring replicas share.
DURABLE = "scoring-games"
#: Unacknowledged results come back after this long (a replica died mid-result).
ACK_WAIT_SECONDS = 10.0
#: Pause before a failed result (Redis unreachable, contention) is tried again.
RETRY_SECONDS = 1.0


class ScoringResults(GameResultGroup):
    """Records the game of each ``<prefix>.results.*.game`` exactly once."""

    def __init__(self, runtime: Runtime, store: ScoreStore) -> None:
        super().__init__(runtime, DURABLE, ACK_WAIT_SECONDS, self.handle)
        self.store = store

    async def handle(self, msg: Msg) -> None:
        """Record one message's game, then acknowledge; a malformed one is dropped for good."""
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

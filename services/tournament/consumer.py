"""The tournaments' durable consumer of game results: each game is recorded once.

A game of a tournament table is known by its table id, which the director
derives from (tournament, round, table): ``<tournament>-r<round>-t<table>``.
All tournament replicas share one durable consumer; a redelivered or repeated
result finds its (round, table, game) recorded and changes nothing.
"""

from __future__ import annotations

import json
import re

from nats.aio.msg import Msg

from services.tournament.core.standings import GameResult, seat_scores
from services.tournament.store import TournamentStore
from shared.infra.result_group import GameResultGroup
from shared.infra.runtime import Runtime
from shared.obs.logs import get_logger
from shared.rpc.errors import ServiceError

log = get_logger("tournament.consumer")

DURABLE = "tournament-games"
RETRY_SECONDS = 1.0
ACK_WAIT_SECONDS = 30.0
_TABLE_ID = re.compile(r"([0-9a-f]{32})-r([0-9]{1,4})-t([0-9]{1,5})")


def parse_table_id(table_id: str) -> tuple[str, int, int] | None:
    """(tournament id, round, table index) of a tournament table; None for other tables."""
    match = _TABLE_ID.fullmatch(table_id)
    if match is None:
        return None
    return match.group(1), int(match.group(2)), int(match.group(3)) - 1


class TournamentResults(GameResultGroup):
    """Records the games of tournament tables from ``<prefix>.results.*.game``."""

    def __init__(self, runtime: Runtime, store: TournamentStore) -> None:
        super().__init__(runtime, DURABLE, ACK_WAIT_SECONDS, self._on_message)
        self.store = store

    async def _on_message(self, msg: Msg) -> None:
        try:
            payload = json.loads(msg.data)
            table_id, game_no = str(payload["table_id"]), int(payload["game_no"])
            scores = [int(score) for score in payload["event"]["scores"]]  # per position
        except (ValueError, KeyError, TypeError):
            log.error("bad_result_message", subject=msg.subject)
            await msg.term()
            return
        where = parse_table_id(table_id)
        if where is None:
            await msg.ack()  # not a tournament table
            return
        try:
            await self.record(where, game_no, scores, (msg.headers or {}).get("Nats-Msg-Id", ""))
        except Exception:
            log.exception("tournament_result_failed", table_id=table_id, game_no=game_no)
            await msg.nak(delay=RETRY_SECONDS)
            return
        await msg.ack()

    async def record(self, where: tuple[str, int, int], game_no: int, scores: list[int],
                     msg_id: str) -> bool:
        """Record one game of a tournament table, seats as the round seated them."""
        tournament_id, round_no, table = where
        try:
            tournament = await self.store.get(tournament_id)
        except ServiceError:
            return False  # expired, or a table id that only looks like one of ours
        if not (0 < round_no <= len(tournament.rounds)
                and 0 <= table < len(tournament.rounds[round_no - 1].tables)
                and 0 < game_no <= tournament.settings.games_per_round):
            return False
        seats = tuple(tournament.rounds[round_no - 1].tables[table])
        try:
            result = GameResult(round_no, table, game_no, seats, seat_scores(scores, len(seats)))
        except ValueError as err:  # a game over that does not match its table: never countable
            log.error("bad_result_scores", tournament_id=tournament_id, round=round_no, table=table + 1,
                      game=game_no, error=str(err))
            return False
        recorded = await self.store.add_result(
            tournament_id, result, {"table_id": tournament.table_id(round_no, table), "msg_id": msg_id})
        if recorded:
            log.info("tournament_game_recorded", tournament_id=tournament_id, round=round_no,
                     table=table + 1, game=game_no)
        return recorded

"""The scoring gRPC servicer: checks requests and turns stored data into messages."""

from __future__ import annotations

import grpc
from structlog.contextvars import bind_contextvars

from services.scoring.finished import FinishedGame
from services.scoring.store import ScoreStore, Standing
from shared.api.stammtisch.v1 import scoring_pb2, scoring_pb2_grpc
from shared.ids import check_player_id, check_table_id
from shared.rpc.auth import caller
from shared.rpc.catalog import game_named
from shared.rpc.errors import invalid
from shared.rpc.times import timestamp

DEFAULT_LIMIT = 10
MAX_LIMIT = 100


def _result_message(game: FinishedGame) -> scoring_pb2.GameResult:
    return scoring_pb2.GameResult(table_id=game.table_id, game_number=game.game_no,
                                  game=game.game, player_ids=game.player_ids,
                                  scores=game.scores, winners=game.winners, finished_at=timestamp(game.at))


class ScoringServicer(scoring_pb2_grpc.ScoringServiceServicer):
    """Read-only queries over the score store."""

    def __init__(self, store: ScoreStore) -> None:
        self.store = store

    async def GetTableResults(self, request: scoring_pb2.GetTableResultsRequest,
                              context: grpc.aio.ServicerContext) -> scoring_pb2.GetTableResultsResponse:
        table_id = check_table_id(request.table_id)
        bind_contextvars(table_id=table_id)
        games = await self.store.table_results(table_id)
        return scoring_pb2.GetTableResultsResponse(results=[_result_message(g) for g in games])

    async def GetLeaderboard(self, request: scoring_pb2.GetLeaderboardRequest,
                             context: grpc.aio.ServicerContext) -> scoring_pb2.GetLeaderboardResponse:
        game = game_named(request.game)
        if not 0 <= request.limit <= MAX_LIMIT:
            raise invalid(f"limit must be 0 (for {DEFAULT_LIMIT}) to {MAX_LIMIT}")
        standings = await self.store.leaderboard(game, request.limit or DEFAULT_LIMIT)
        entries = await self._entries([(game, standing) for standing in standings])
        return scoring_pb2.GetLeaderboardResponse(entries=entries)

    async def GetPlayerStats(self, request: scoring_pb2.GetPlayerStatsRequest,
                             context: grpc.aio.ServicerContext) -> scoring_pb2.GetPlayerStatsResponse:
        player_id = check_player_id(request.player_id or caller().player_id)
        per_game = await self.store.player_stats(player_id)
        return scoring_pb2.GetPlayerStatsResponse(per_game=await self._entries(per_game))

    async def _entries(self, standings: list[tuple[str, Standing]]) -> list[scoring_pb2.LeaderboardEntry]:
        """Entries with the players' current display names."""
        names = await self.store.names(sorted({s.player_id for _game, s in standings}))
        return [scoring_pb2.LeaderboardEntry(player_id=s.player_id, name=names[s.player_id],
                                             games=s.games, wins=s.wins, rating=s.rating.conservative(),
                                             mu=s.rating.mu, sigma=s.rating.sigma,
                                             game=game)
                for game, s in standings]

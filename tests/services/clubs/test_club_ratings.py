"""Results of one club rated at the same moment all count (the ratings are written under
WATCH/MULTI and retried on a conflict), and a redelivered result still counts once."""

from __future__ import annotations

import asyncio
import time

import pytest

from services.clubs.keys import Keys
from services.clubs.ratings import ClubRatings
from services.scoring.finished import FinishedGame
from shared.infra.runtime import Runtime

pytestmark = pytest.mark.integration
GAMES = 8


def result(number: int, players: list[str], winner: int) -> FinishedGame:
    scores = [0] * len(players)
    scores[winner] = 10
    return FinishedGame(f"table-{number}:1:0", f"table-{number}", 1, "mau-mau", 1, players, scores,
                        [winner], time.time())


async def test_results_of_one_club_rated_at_once_all_count(runtime: Runtime) -> None:
    ratings = ClubRatings(Keys(runtime))
    games = [result(number, ["anna", f"rival-{number}"], 0) for number in range(GAMES)]
    recorded = await asyncio.gather(*(ratings.record("club", 1, game) for game in games))
    assert recorded == [True] * GAMES
    board = await ratings.standings("club", 1, "mau-mau")
    assert (board["anna"].games, board["anna"].wins) == (GAMES, GAMES)
    assert all(board[f"rival-{number}"].games == 1 for number in range(GAMES))
    assert board["anna"].mu > board["rival-0"].mu
    assert not await ratings.record("club", 1, games[0])
    assert (await ratings.standings("club", 1, "mau-mau"))["anna"].games == GAMES

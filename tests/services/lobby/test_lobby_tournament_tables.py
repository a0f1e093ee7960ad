"""A tournament's lobby table refuses what only its director may do (issue 12).

Before: a stranger could queue at a tournament table and be seated into its next
game when a seat freed up, and a seated player could add a bot or get ready."""

from __future__ import annotations

import time

import pytest

from services.lobby.model import LobbyTable, SeatState, Status
from shared.errors import Refused


def _tournament_table(status: Status) -> LobbyTable:
    seats = [SeatState("p0", "Anna"), SeatState(), SeatState("p2", "Carl")]
    return LobbyTable("t1-r1-t1", "willi-stich", {}, 0.0, seats, time.time(), status=status,
                      games_played=1, tournament_id="t1")


@pytest.mark.parametrize("status", [Status.PLAYING, Status.BETWEEN_GAMES])
def test_nobody_joins_a_tournament_table(status: Status) -> None:
    table = _tournament_table(status)
    with pytest.raises(Refused, match="register for the tournament"):
        table.join("p9", "Stranger", None)
    assert table.waiting == [] and table.seats[1].open


def test_nobody_adds_a_bot_or_gets_ready_there() -> None:
    table = _tournament_table(Status.BETWEEN_GAMES)
    with pytest.raises(Refused, match="nobody adds bots"):
        table.add_bot("p0", "heuristic", None)
    with pytest.raises(Refused, match="nobody gets ready"):
        table.set_ready("p0", True)
    assert table.seats[1].open and not table.seats[0].ready


def test_spectators_are_welcome() -> None:
    table = _tournament_table(Status.PLAYING)
    table.spectate("p9")
    assert table.spectators == ["p9"]

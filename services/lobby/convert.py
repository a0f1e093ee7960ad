"""Lobby tables as clients see them (the Table message)."""

from __future__ import annotations

import time

from services.lobby.catalog import options_proto
from services.lobby.model import NO_SEAT, LobbyTable, Status
from shared.api.stammtisch.v1 import lobby_pb2
from shared.rpc.times import timestamp

_STATUS = {
    Status.WAITING: lobby_pb2.TABLE_STATUS_WAITING,
    Status.PLAYING: lobby_pb2.TABLE_STATUS_PLAYING,
    Status.BETWEEN_GAMES: lobby_pb2.TABLE_STATUS_BETWEEN_GAMES,
}


def table_proto(table: LobbyTable, play_port: int = 0) -> lobby_pb2.Table:
    """The whole public picture of a table: seats, names, readiness, newcomers, and where it is
    played best (shared/tables/placement.py)."""
    return lobby_pb2.Table(
        table_id=table.table_id, game=table.game,
        options=options_proto(table.options, table.turn_seconds),
        seats=[lobby_pb2.Seat(seat=index, player_id=seat.player_id, name=seat.name,
                              ready=seat.ready or bool(seat.bot), bot=bool(seat.bot))
               for index, seat in enumerate(table.seats)],
        status=_STATUS[table.status], games_played=table.games_played,
        spectators=len(table.spectators), created_at=timestamp(table.created_at),
        waiting=[lobby_pb2.Seat(seat=NO_SEAT if entry.seat is None else entry.seat,
                                player_id=entry.player_id, name=entry.name)
                 for entry in table.waiting],
        play_port=play_port, private=table.private, held_seats=table.held_seats(time.time()))

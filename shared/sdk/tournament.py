"""Tournaments through the real API: create, register, watch, and play one's seats.

A player in a tournament watches it (``WatchTournament``); each ``seated``
entry names their table and seat for the round, which they play like any
table (``play_round``: every game of the round, a bot choosing the moves, or a
person at the terminal). The round ends for them when the director says so.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any

import grpc

from shared.api.stammtisch.v1 import common_pb2, tournament_pb2
from shared.games.registry import bot_levels
from shared.sdk.botplayer import play_seat
from shared.sdk.client import StammtischClient

FORMATS = {"series": tournament_pb2.TOURNAMENT_FORMAT_SERIES,
           "knockout": tournament_pb2.TOURNAMENT_FORMAT_KNOCKOUT}
#: A watch stream that ended with these is opened again after the last entry seen: a connection
#: the server dropped (its keepalive gave up on a busy client) ends the stream CANCELLED.
RESUMED = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.CANCELLED)
#: Plays one game at a seat: (client, table id) -> when the game is over.
SeatPlayer = Callable[[StammtischClient, str], Awaitable[Any]]


async def create_tournament(client: StammtischClient, name: str, game: str, fmt: str, *,
                            capacity: int, rounds: int = 1, games_per_round: int = 1,
                            table_size: int = 4, options: Mapping[str, Any] | None = None,
                            turn_seconds: int | None = None, **settings: Any) -> tournament_pb2.Tournament:
    """A new tournament of ``game`` (its catalogue name) organized by the client; ``options``
    are the game's options of every table, ``turn_seconds`` their clock (None: the server's),
    ``settings`` TournamentSettings fields."""
    request = tournament_pb2.TournamentSettings(
        name=name, game=game, format=FORMATS[fmt], capacity=capacity, rounds=rounds,
        games_per_round=games_per_round, table_size=table_size,
        options=common_pb2.TableOptions(turn_seconds=turn_seconds), **settings)
    request.options.game_options.update(options or {})
    reply = await client.tournaments.CreateTournament(
        tournament_pb2.CreateTournamentRequest(settings=request), metadata=client.auth)
    return reply.tournament


async def register(client: StammtischClient, tournament_id: str,
                   attempts: int = 5) -> tournament_pb2.Tournament:
    """Enter the tournament; UNAVAILABLE (a busy tournament, a restarting server) is retried."""
    request = tournament_pb2.RegisterRequest(tournament_id=tournament_id)
    for attempt in range(attempts - 1):
        try:
            return (await client.tournaments.Register(request, metadata=client.auth)).tournament
        except grpc.aio.AioRpcError as err:
            if err.code() != grpc.StatusCode.UNAVAILABLE:
                raise
            await asyncio.sleep(random.uniform(0.05, 0.2) * (attempt + 1))
    return (await client.tournaments.Register(request, metadata=client.auth)).tournament


async def get(client: StammtischClient, tournament_id: str) -> tournament_pb2.Tournament:
    """The tournament as it is now."""
    reply = await client.tournaments.GetTournament(
        tournament_pb2.GetTournamentRequest(tournament_id=tournament_id), metadata=client.auth)
    return reply.tournament


async def start(client: StammtischClient, tournament_id: str) -> tournament_pb2.Tournament:
    """Organizer: start now."""
    reply = await client.tournaments.StartTournament(
        tournament_pb2.StartTournamentRequest(tournament_id=tournament_id), metadata=client.auth)
    return reply.tournament


async def start_next_round(client: StammtischClient, tournament_id: str) -> tournament_pb2.Tournament:
    """Organizer (manual rounds): seat the next round now."""
    reply = await client.tournaments.StartNextRound(
        tournament_pb2.StartNextRoundRequest(tournament_id=tournament_id), metadata=client.auth)
    return reply.tournament


async def set_forbidden_pairs(client: StammtischClient, tournament_id: str,
                              pairs: list[tuple[str, str]]) -> tournament_pb2.Tournament:
    """Organizer: the pairs of players who must not meet at a table (replaces the list)."""
    reply = await client.tournaments.SetForbiddenPairs(tournament_pb2.SetForbiddenPairsRequest(
        tournament_id=tournament_id,
        pairs=[tournament_pb2.ForbiddenPair(player_a=a, player_b=b) for a, b in pairs]), metadata=client.auth)
    return reply.tournament


async def export_results(client: StammtischClient, tournament_id: str,
                         fmt: tournament_pb2.ExportFormat.ValueType) -> tournament_pb2.ExportResultsResponse:
    """The results as a file (standings CSV, games CSV or JSON)."""
    return await client.tournaments.ExportResults(
        tournament_pb2.ExportResultsRequest(tournament_id=tournament_id, format=fmt), metadata=client.auth)


async def standings(client: StammtischClient, tournament_id: str) -> tournament_pb2.GetStandingsResponse:
    """The standings now, with the tournament's status."""
    return await client.tournaments.GetStandings(
        tournament_pb2.GetStandingsRequest(tournament_id=tournament_id), metadata=client.auth)


async def watch(client: StammtischClient, tournament_id: str, after_seq: int = 0,
                lean: bool = False) -> AsyncIterator[tournament_pb2.WatchTournamentResponse]:
    """The tournament's history, then live news, resuming after a dropped connection; ``lean``:
    only what a player needs (no standings per game, no round tables; see the proto)."""
    last = after_seq
    while True:
        stream = client.tournaments.WatchTournament(
            tournament_pb2.WatchTournamentRequest(tournament_id=tournament_id, after_seq=last, lean=lean),
            metadata=client.auth)
        try:
            async for news in stream:
                last = news.seq
                yield news
            return
        except grpc.aio.AioRpcError as err:
            if err.code() not in RESUMED:
                raise
            await asyncio.sleep(random.uniform(0.1, 0.5))  # thousands of watchers do not return at once


def bot_player(game: str, seed: int, level: str = "heuristic", think_seconds: float = 0.0) -> SeatPlayer:
    """A seat player that lets the game's bot choose every move."""
    rng = random.Random(seed)

    async def play(client: StammtischClient, table_id: str) -> Any:
        return await play_seat(client, table_id, bot_levels(game)[level](), rng, think_seconds)

    return play


async def play_round(client: StammtischClient, table_id: str, games: int, player: SeatPlayer,
                     poll_seconds: float = 0.2) -> None:
    """Play the round's ``games`` games at the table, one after the other.

    Between games the director starts the next one; the seat waits until its view
    is of a running game again. Once bots play the seat (the round's time limit
    passed, or the player withdrew) there is nothing left to play.
    """
    for game in range(games):
        if game:
            while (await client.view(table_id)).view.get("over"):
                await asyncio.sleep(poll_seconds)
        try:
            await player(client, table_id)
        except grpc.aio.AioRpcError as err:
            if err.code() != grpc.StatusCode.FAILED_PRECONDITION:
                raise
            return


async def play_tournament(client: StammtischClient, tournament_id: str, player: SeatPlayer,
                          on_news: Callable[[tournament_pb2.WatchTournamentResponse], None] | None = None,
                          lean: bool = False) -> tournament_pb2.WatchTournamentResponse:
    """Play every round one is seated in until the tournament ends; returns the last news.

    A round's play stops when the director ends the round (its time limit may
    end games the seat was still waiting for). A seat that fails (the player's
    input ended, a call refused) ends the whole play at once with its error,
    not when the round ends without it. ``lean``: watch without what only spectators need.
    """
    last = tournament_pb2.WatchTournamentResponse()
    try:
        async with asyncio.TaskGroup() as seats:
            seat_task: asyncio.Task[None] | None = None
            async for news in watch(client, tournament_id, lean=lean):
                last = news
                if on_news is not None:
                    on_news(news)
                if news.change == "seated" and news.HasField("your_seat"):
                    games = (news.your_seat.games
                             or (await get(client, tournament_id)).settings.games_per_round)
                    seat_task = seats.create_task(play_round(client, news.your_seat.table_id, games, player))
                elif news.change == "round_finished" and seat_task is not None:
                    seat_task.cancel()
                    seat_task = None
            if seat_task is not None:  # cancelled mid-round
                seat_task.cancel()
    except BaseExceptionGroup as failed:
        raise failed.exceptions[0] from None
    return last

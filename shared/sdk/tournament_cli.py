"""`stammtisch tournament create|join|watch|standings` and `stammtisch play --tournament`.

Every command logs in as a fresh guest. ``create`` starts the tournament by
its ``start_at`` (``--start-in`` seconds from now) and can bring bot clients
that register and play through the real API, so one person with ``stammtisch
play GAME --tournament ID`` plays a whole tournament against them.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from google.protobuf.timestamp_pb2 import Timestamp

from shared.api.stammtisch.v1 import tournament_pb2
from shared.sdk import tournament as sdk
from shared.sdk.client import Endpoints, StammtischClient
from shared.sdk.terminal import play_game


def describe(news: tournament_pb2.WatchTournamentResponse) -> str:
    """One line (plus standings, if any) for a news entry."""
    line = f"[{news.seq}] {news.change}"
    if news.player_id:
        line += f" {news.player_id[:8]}"
    if news.change == "seated":
        line += f": round {news.round.round}, {len(news.round.tables)} table(s)"
        if news.HasField("your_seat"):
            mine = news.your_seat
            line += f"; you: table {mine.table} seat {mine.seat} ({mine.table_id})"
    if news.HasField("result"):
        result = news.result
        line += f": round {result.round} table {result.table} game {result.game} scores {list(result.scores)}"
    if news.standings:
        line += "\n" + format_standings(news.standings)
    return line


def format_standings(lines: Any) -> str:
    """A small table of standing lines."""
    rows = [f"  {'#':>3} {'name':<24} {'points':>8} {'game pts':>9} {'wins':>5} {'games':>5}"]
    rows += [f"  {line.rank:>3} {(line.name or line.player_id[:8]):<24} {line.points:>8.3f} "
             f"{line.game_points:>9} {line.wins:>5} {line.games:>5}"
             + ("  (withdrawn)" if line.withdrawn else "") for line in lines]
    return "\n".join(rows)


async def bot_entries(endpoints: Endpoints, tournament_id: str, game: str, count: int,
                      think_seconds: float) -> None:
    """``count`` bot clients register and play every seat they get until the tournament ends."""
    clients = [StammtischClient(endpoints) for _ in range(count)]
    try:
        for index, client in enumerate(clients):
            await client.login(f"Bot {index + 1}")
            await sdk.register(client, tournament_id)
        await asyncio.gather(*(
            sdk.play_tournament(client, tournament_id,
                                sdk.bot_player(game, index, think_seconds=think_seconds))
            for index, client in enumerate(clients)))
    finally:
        await asyncio.gather(*(client.close() for client in clients))


async def create(endpoints: Endpoints, args: Any) -> int:
    """Create a tournament, print its id, and run its bot entries (if any) to the end."""
    options = {"start_round": args.start_round} if args.start_round else {}
    start_at = Timestamp()
    start_at.FromNanoseconds(int((time.time() + args.start_in) * 1e9))
    async with StammtischClient(endpoints) as organizer:
        await organizer.login(args.name)
        created = await sdk.create_tournament(
            organizer, args.title, args.game, args.format, capacity=args.capacity, rounds=args.rounds,
            games_per_round=args.games, table_size=args.table_size, options=options,
            duplicate_deals=args.duplicate, keep=args.keep, start_at=start_at,
            round_seconds=args.round_seconds)
    print(f"tournament {created.tournament_id}: starts in {args.start_in:.0f} s", flush=True)
    print(f"  join it: stammtisch play {args.game} --tournament {created.tournament_id}", flush=True)
    if args.bots:
        await bot_entries(endpoints, created.tournament_id, args.game, args.bots, args.think)
    return 0


async def join(endpoints: Endpoints, tournament_id: str, bots: int, think: float) -> int:
    """Register ``bots`` bot clients that play through the real API."""
    async with StammtischClient(endpoints) as client:
        await client.login("lookup")
        reply = await client.tournaments.GetTournament(
            tournament_pb2.GetTournamentRequest(tournament_id=tournament_id), metadata=client.auth)
    game = sdk.GAME_ENUMS_BY_NUMBER[reply.tournament.settings.game]
    await bot_entries(endpoints, tournament_id, game, bots, think)
    return 0


async def watch(endpoints: Endpoints, tournament_id: str) -> int:
    """Print the tournament's history and live news until it ends."""
    async with StammtischClient(endpoints) as client:
        await client.login("watcher")
        async for news in sdk.watch(client, tournament_id):
            print(describe(news), flush=True)
    return 0


async def standings(endpoints: Endpoints, tournament_id: str) -> int:
    """Print the standings now."""
    async with StammtischClient(endpoints) as client:
        await client.login("viewer")
        reply = await sdk.standings(client, tournament_id)
    print(f"status: {tournament_pb2.TournamentStatus.Name(reply.status)}")
    print(format_standings(reply.standings))
    return 0


async def play(endpoints: Endpoints, tournament_id: str, name: str) -> int:
    """Register as a person and play one's seats at the terminal until the tournament ends."""
    async with StammtischClient(endpoints) as client:
        await client.login(name)
        await sdk.register(client, tournament_id)
        print(f"registered for {tournament_id}; waiting for the seating", flush=True)
        last = await sdk.play_tournament(client, tournament_id, play_game,
                                         lambda news: print(describe(news), flush=True))
    return 0 if last.change == "finished" else 1

"""`stammtisch tournament create|join|watch|standings|start|pause|resume|cancel|remove` and
`stammtisch play --tournament`.

The organizer is a lasting player: ``create`` and the organizer controls log
in with a device file (``--device``, default ``services.host.cli.ORGANIZER_DEVICE``, made
on first use), so the organizer of a tournament can act on it from any later
shell. The other commands log in as a fresh guest (``play`` as the player of
``--device``, if given). ``create`` starts the tournament by its ``start_at``
(``--start-in`` seconds from now) and can bring bot clients that register and
play through the real API, so one person with ``stammtisch play GAME
--tournament ID`` plays a whole tournament against them.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

import grpc

from shared.api.stammtisch.v1 import tournament_pb2
from shared.rpc.times import timestamp
from shared.sdk import tournament as sdk
from shared.sdk.client import Endpoints, StammtischClient
from shared.sdk.device import login_from_file
from shared.sdk.terminal import LineReader, leave_seat, play_game

#: Organizer controls: CLI verb -> what is printed once done.
CONTROLS = {"start": "started", "pause": "paused", "resume": "resumed", "cancel": "cancelled",
            "remove": "removed", "next-round": "started its next round"}


async def login(client: StammtischClient, name: str, device: str | Path | None) -> None:
    """Log in as the device file's lasting player, or as a fresh guest without one."""
    if device:
        await login_from_file(client, device, name)
    else:
        await client.login(name)


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
    if news.change in ("time_up", "round_finished"):
        line += f": round {news.round_number}"
    if news.HasField("result"):
        result = news.result
        line += f": round {result.round} table {result.table} game {result.game} scores {list(result.scores)}"
        if result.provisional:
            line += " (points provisional: other tables of the deal still play)"
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
    start_at = timestamp(time.time() + args.start_in)
    async with StammtischClient(endpoints) as organizer:
        await login(organizer, args.name, args.device)
        created = await sdk.create_tournament(
            organizer, args.title, args.game, args.format, capacity=args.capacity, rounds=args.rounds,
            games_per_round=args.games, table_size=args.table_size, options=args.option,
            duplicate_deals=args.duplicate, keep=args.keep, start_at=start_at,
            round_seconds=args.round_seconds)
    print(f"tournament {created.tournament_id}: starts in {args.start_in:.0f} s", flush=True)
    print(f"  join it: stammtisch play {args.game} --tournament {created.tournament_id}", flush=True)
    print(f"  organizer: {args.device} (stammtisch tournament start|pause|resume|cancel|remove "
          f"{created.tournament_id} log in with it)", flush=True)
    if args.bots:
        await bot_entries(endpoints, created.tournament_id, args.game, args.bots, args.think)
    return 0


async def join(endpoints: Endpoints, tournament_id: str, bots: int, think: float) -> int:
    """Register ``bots`` bot clients that play through the real API."""
    async with StammtischClient(endpoints) as client:
        await client.login("lookup")
        game = (await sdk.get(client, tournament_id)).settings.game
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


def _player_id(tournament: tournament_pb2.Tournament, who: str) -> str:
    """The entrant ``who`` names: a player id, the start of one (as `watch` prints), or a name."""
    found = {p.player_id for p in tournament.players
             if p.player_id.startswith(who.lower()) or p.name == who}
    if len(found) != 1:
        raise LookupError(f"{who!r} names {len(found) or 'no'} entrants of the tournament "
                          f"(give more of the player id)")
    return found.pop()


async def control(endpoints: Endpoints, action: str, tournament_id: str, device: str | Path,
                  player: str = "") -> int:
    """An organizer control (``CONTROLS``) as the organizer of the device file."""
    async with StammtischClient(endpoints) as organizer:
        await login_from_file(organizer, device)
        if action == "remove":
            entrant = _player_id(await sdk.get(organizer, tournament_id), player)
            reply: Any = await organizer.tournaments.RemovePlayer(tournament_pb2.RemovePlayerRequest(
                tournament_id=tournament_id, player_id=entrant),
                metadata=organizer.auth)
        elif action == "next-round":
            reply = await organizer.tournaments.StartNextRound(tournament_pb2.StartNextRoundRequest(
                tournament_id=tournament_id), metadata=organizer.auth)
        else:
            call = getattr(organizer.tournaments, f"{action.capitalize()}Tournament")
            request = getattr(tournament_pb2, f"{action.capitalize()}TournamentRequest")
            reply = await call(request(tournament_id=tournament_id), metadata=organizer.auth)
    status = tournament_pb2.TournamentStatus.Name(reply.tournament.status)
    print(f"tournament {tournament_id} {CONTROLS[action]}{' ' + player if player else ''}: {status}")
    return 0


async def page(endpoints: Endpoints, tournament_id: str, device: str | Path, host: str, port: int) -> int:
    """The tournament page's address; for its organizer (the player of the device file) with the
    token in the #fragment, which the browser keeps to itself (never sent, never in a log)."""
    url = f"http://{host}:{port}/tournaments/{tournament_id}"
    async with StammtischClient(endpoints) as organizer:
        await login_from_file(organizer, device)
        tournament = await sdk.get(organizer, tournament_id)
        if tournament.organizer_id != organizer.player_id:
            print(url)
            return 0
        print(f"{url}#token={organizer.token}")
    print("(the link logs you in as the organizer in that tab: keep it to yourself)", file=sys.stderr)
    return 0


def run(command: Coroutine[Any, Any, int]) -> int:
    """Run a command; a refusal is one line on stderr and exit 1, not a traceback
    (PERMISSION_DENIED: not the organizer; FAILED_PRECONDITION: not now; NOT_FOUND: no such
    tournament)."""
    try:
        return asyncio.run(command)
    except grpc.aio.AioRpcError as err:
        print(f"refused: {err.code().name}: {err.details()}", file=sys.stderr)
    except LookupError as err:
        print(f"refused: {err.args[0]}", file=sys.stderr)
    return 1


async def play(endpoints: Endpoints, tournament_id: str, name: str, device: str | None = None) -> int:
    """Register as a person and play one's seats at the terminal until the tournament ends.

    Ctrl-C (or the end of input) leaves the current table as ``stammtisch play`` does (the
    stand-in bot plays the seat) and stops; one stays registered, and with ``--device``
    can come back with the same command.
    """
    async with StammtischClient(endpoints) as client:
        await login(client, name, device)
        tournament = await sdk.get(client, tournament_id)
        game = tournament.settings.game
        if all(p.player_id != client.player_id for p in tournament.players):
            await sdk.register(client, tournament_id)
        print(f"registered for {tournament_id}; waiting for the seating · Ctrl-C leaves", flush=True)
        table: list[str] = []  # the table of the round being played, if any
        reader = LineReader()

        def follow(news: tournament_pb2.WatchTournamentResponse) -> None:
            reader.interject(describe(news))
            if news.change == "seated" and news.HasField("your_seat"):
                table[:] = [news.your_seat.table_id]
            elif news.change == "round_finished":
                table.clear()

        try:
            last = await sdk.play_tournament(
                client, tournament_id, lambda c, table_id: play_game(c, table_id, reader), follow)
        except (asyncio.CancelledError, KeyboardInterrupt, EOFError):
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()  # leave with the loop still running, then end normally
            if table:
                await leave_seat(client, table[0], game)
            return 130
        finally:
            reader.close()
    return 0 if last.change == "finished" else 1

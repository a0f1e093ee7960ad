"""`stammtisch history`, `stammtisch replay --table` and `stammtisch verify`: finished games in
the terminal, and the check that a deal came from its committed seed."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import TextIO

import grpc
from google.protobuf.json_format import ParseError

from shared.api.stammtisch.v1 import history_pb2
from shared.archive.messages import archive_of, replay_from_json, replay_to_json
from shared.archive.verify import verify
from shared.games.registry import engine_class
from shared.sdk.client import Endpoints, StammtischClient
from shared.sdk.device import login_from_file
from shared.sdk.phrases import Seats, event_line


async def _client(endpoints: Endpoints, device: str | None) -> StammtischClient:
    client = StammtischClient(endpoints)
    if device:
        await login_from_file(client, device)
    else:
        await client.login("replay viewer")
    return client


async def fetch(endpoints: Endpoints, device: str | None, table_id: str,
                game_no: int) -> history_pb2.GetReplayResponse:
    """A finished game's replay from the server."""
    client = await _client(endpoints, device)
    try:
        return await client.replay(table_id, game_no)
    finally:
        await client.close()


def _shown(summary: dict[str, object]) -> str:
    """A full-information state summary as compact JSON (phases print as their names)."""
    return json.dumps(summary, default=str, separators=(",", ":"))


def playback(reply: history_pb2.GetReplayResponse, out: TextIO, delay: float = 0.0) -> None:
    """Print the game commit by commit: the deal with every hand, each move, the end, the seed."""
    archive = archive_of(reply)
    names = {seat["seat"]: seat["name"] or (f"bot ({seat['bot']})" if seat.get("bot") else "-")
             for seat in archive.seats}
    print(f"{archive.game} · table {archive.table_id} · game {archive.game_no} · "
          + ", ".join(f"seat {seat}: {name}" for seat, name in names.items()), file=out)
    seats = Seats([names.get(seat, "-") for seat in range(max(names, default=-1) + 1)], None)
    print(f"commitment (published at the start): {archive.commitment}", file=out)
    cls = engine_class(archive.game)
    print(f"the deal: {_shown(cls.from_dict(archive.commits[0].state).summary())}", file=out)
    for commit in archive.commits[1:]:
        who = "server" if commit.actor is None else f"seat {commit.actor} ({names.get(commit.actor, '?')})"
        lines = "; ".join(event_line(event, seats, archive.game) for event in commit.events)
        action = f" {commit.action}" if commit.action else ""
        print(f"#{commit.seq} {who}{action}: {lines}", file=out)
        if delay:
            out.flush()
            time.sleep(delay)
    print(f"final: {_shown(cls.from_dict(archive.commits[-1].state).summary())}", file=out)
    print(f"seed {archive.seed} · salt {archive.salt} (check with: stammtisch verify FILE)", file=out)


def replay_table(endpoints: Endpoints, device: str | None, table_id: str, game_no: int,
                 save: str | None, delay: float) -> int:
    """`stammtisch replay --table`: fetch, optionally save, and play back."""
    try:
        reply = asyncio.run(fetch(endpoints, device, table_id, game_no))
    except grpc.aio.AioRpcError as err:
        print(f"replay: {err.code().name}: {err.details()}", file=sys.stderr)
        return 1
    if save:
        Path(save).write_text(replay_to_json(reply), encoding="utf-8")
    playback(reply, sys.stdout, delay)
    return 0


def verify_main(endpoints: Endpoints, device: str | None, path: str | None, table_id: str | None,
                game_no: int) -> int:
    """`stammtisch verify`: exit 0 when every commit is what the revealed seed makes, 1 when not,
    2 when the replay cannot be read or fetched."""
    try:
        if path:
            reply = replay_from_json(Path(path).read_text(encoding="utf-8"))
        elif table_id:
            reply = asyncio.run(fetch(endpoints, device, table_id, game_no))
        else:
            print("verify: give a replay FILE or --table ID", file=sys.stderr)
            return 2
        archive = archive_of(reply)
    except (OSError, ParseError, ValueError, KeyError) as err:
        print(f"verify: cannot read the replay: {err}", file=sys.stderr)
        return 2
    except grpc.aio.AioRpcError as err:
        print(f"verify: {err.code().name}: {err.details()}", file=sys.stderr)
        return 2
    problems = verify(archive)
    for problem in problems:
        print(f"MISMATCH {problem}")
    if problems:
        return 1
    print(f"OK {archive.game} table {archive.table_id} game {archive.game_no}: seed {archive.seed} "
          f"matches commitment {archive.commitment} and all {len(archive.commits)} commits")
    return 0


def history_main(endpoints: Endpoints, device: str, page_size: int) -> int:
    """`stammtisch history`: the device player's finished games, newest first."""

    async def listing() -> int:
        client = await _client(endpoints, device)
        try:
            token = ""
            while True:
                page = await client.my_games(page_size, token)
                for game in page.games:
                    seats = ", ".join(s.name or s.bot or "-" for s in game.seats)
                    print(f"{game.ended_at.ToDatetime():%Y-%m-%d %H:%M} {game.game} "
                          f"--table {game.table_id} --game {game.game_no} · you: seat {game.seat} · "
                          f"winners {list(game.winners)} · {seats}")
                token = page.next_page_token
                if not token:
                    return 0
        finally:
            await client.close()

    return asyncio.run(listing())

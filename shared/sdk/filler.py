"""`stammtisch bots`: fill open seats of open tables with bot clients over the real API."""

from __future__ import annotations

import asyncio
import itertools
import random

import grpc

from shared.games.registry import bot_levels
from shared.logs import get_logger
from shared.sdk.botplayer import play_seat
from shared.sdk.client import GAME_NAMES, Endpoints, StammtischClient

log = get_logger("bots")
_names = itertools.count(1)


async def bot_client(endpoints: Endpoints, table_id: str, level: str, seed: int,
                     think_seconds: float) -> None:
    """One bot: log in, take a seat, say ready, play the game, leave."""
    async with StammtischClient(endpoints) as client:
        await client.login(f"bot-{next(_names)}")
        try:
            reply = await client.join(table_id)
        except grpc.aio.AioRpcError as err:
            log.info("seat_taken", table_id=table_id, reason=err.details())
            return
        game = GAME_NAMES[reply.table.game]
        await client.ready(table_id)
        bot = bot_levels(game)[level]()
        final = await play_seat(client, table_id, bot, random.Random(seed), think_seconds)
        log.info("bot_finished", table_id=table_id, seat=reply.seat, scores=final.view.get("scores"))
        await client.leave(table_id)


async def fill_tables(endpoints: Endpoints, game: str | None, level: str, think_seconds: float,
                      once: bool, poll_seconds: float = 1.0) -> int:
    """Keep open seats filled; with ``once``, fill what is open now and wait for those games."""
    busy: dict[str, set[asyncio.Task[None]]] = {}
    seeds = itertools.count(1)
    async with StammtischClient(endpoints) as scout:
        await scout.login("bot-scout")
        while True:
            for table in await scout.list_tables(game, open_only=True):
                open_seats = [s for s in table.seats if not s.player_id]
                tasks = busy.setdefault(table.table_id, set())
                for _ in range(max(0, len(open_seats) - len(tasks))):
                    task = asyncio.create_task(bot_client(endpoints, table.table_id, level,
                                                          next(seeds), think_seconds))
                    tasks.add(task)
                    task.add_done_callback(tasks.discard)
            running = [t for tasks in busy.values() for t in tasks]
            if once:
                await asyncio.gather(*running)
                return 0
            await asyncio.sleep(poll_seconds)

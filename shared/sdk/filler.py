"""`stammtisch bots`: fill open seats of open tables with bot clients over the real API."""

from __future__ import annotations

import asyncio
import itertools
import random
from collections.abc import Iterable

import grpc

from shared.api.stammtisch.v1 import lobby_pb2
from shared.games.registry import bot_levels
from shared.obs.logs import get_logger
from shared.sdk.botplayer import play_seat
from shared.sdk.client import Endpoints, StammtischClient

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
        game = reply.table.game
        await client.ready(table_id)
        bot = bot_levels(game)[level]()
        final = await play_seat(client, table_id, bot, random.Random(seed), think_seconds)
        log.info("bot_finished", table_id=table_id, seat=reply.seat, scores=final.view.get("scores"))
        await client.leave(table_id)


def open_seats(table: lobby_pb2.Table) -> int:
    """Seats nobody plays: no player and no server bot (a bot's seat has no player id either)."""
    return sum(1 for seat in table.seats if not seat.player_id and not seat.bot)


class SeatFiller:
    """Starts bot clients for open seats, never more at a table than it has open seats."""

    def __init__(self, endpoints: Endpoints, level: str, think_seconds: float) -> None:
        self.endpoints = endpoints
        self.level = level
        self.think_seconds = think_seconds
        self._running: dict[str, set[asyncio.Task[None]]] = {}
        self._seeds = itertools.count(1)

    def fill(self, tables: Iterable[lobby_pb2.Table]) -> list[asyncio.Task[None]]:
        """One bot client per open seat not already being taken; returns the clients started."""
        started = []
        for table in tables:
            tasks = self._running.setdefault(table.table_id, set())
            for _ in range(max(0, open_seats(table) - len(tasks))):
                task = asyncio.create_task(bot_client(self.endpoints, table.table_id, self.level,
                                                      next(self._seeds), self.think_seconds))
                tasks.add(task)
                task.add_done_callback(tasks.discard)
                started.append(task)
        return started

    async def wait(self) -> None:
        """Until every bot client started so far has finished its game."""
        await asyncio.gather(*(task for tasks in self._running.values() for task in tasks))


async def fill_tables(endpoints: Endpoints, game: str, level: str, think_seconds: float,
                      once: bool, poll_seconds: float = 1.0) -> int:
    """Keep open seats of ``game``'s tables ("": every game's) filled; with ``once``, fill
    what is open now and wait for those games."""
    filler = SeatFiller(endpoints, level, think_seconds)
    async with StammtischClient(endpoints) as scout:
        await scout.login("bot-scout")
        while True:
            filler.fill(await scout.list_tables(game, open_only=True))
            if once:
                await filler.wait()
                return 0
            await asyncio.sleep(poll_seconds)

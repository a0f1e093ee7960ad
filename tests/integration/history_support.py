"""Helpers for the history and accounts tests: a stack whose server bots move at once, and a
whole game played through the SDK (no tests of their own)."""

from __future__ import annotations

import asyncio
import dataclasses
import random
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from services.runner import SERVICE_NAMES, running_services
from shared.config import Settings
from shared.games.registry import bot_levels
from shared.sdk.botplayer import play_seat
from shared.sdk.client import Endpoints, StammtischClient


@asynccontextmanager
async def quick_stack(settings: Settings) -> AsyncIterator[Endpoints]:
    """All four services in this process, server bots acting without delay."""
    fast = dataclasses.replace(settings, bot_delay_seconds=0.0)
    async with running_services(fast, SERVICE_NAMES) as running:
        ports = {item.service.name: f"127.0.0.1:{item.port}" for item in running}
        yield Endpoints(ports["lobby"], ports["engine"], ports["arbiter"], ports["scoring"])


async def start_game(people: list[StammtischClient], game: str, seats: int) -> str:
    """A table of ``game`` with the people in the first seats and server bots in the rest, its
    game started (nobody has acted yet: the first person owes nothing before it is started)."""
    table = await people[0].create_table(game, seats, join=True, turn_seconds=0)
    for index, person in enumerate(people[1:], 1):
        await person.join(table.table_id, seat=index)
    for _ in range(seats - len(people)):
        await people[0].add_bot(table.table_id)
    for person in people:
        await person.ready(table.table_id)
    await people[0].wait_for_game(table.table_id)
    return table.table_id


async def finish_game(people: list[StammtischClient], table_id: str, game: str, seed: int = 1) -> None:
    """The people play the table's game to its end with the heuristic bot."""
    await asyncio.gather(*(play_seat(person, table_id, bot_levels(game)["heuristic"](),
                                     random.Random(seed + index))
                           for index, person in enumerate(people)))

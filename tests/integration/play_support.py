"""Helpers for tests that play a few real moves through the SDK (no tests of their own)."""

from __future__ import annotations

import random
from typing import Any

from services.launch import LaunchedStack
from shared.games.registry import bot_levels
from shared.sdk.client import Endpoints, StammtischClient


def stack_endpoints(stack: LaunchedStack) -> Endpoints:
    """Where a launched stack's services listen."""
    found = stack.endpoints
    return Endpoints(found["lobby"], found["engine"], found["arbiter"], found["scoring"])


async def seated_table(ends: Endpoints, game: str, seats: int) -> tuple[list[StammtischClient], str]:
    """Logged-in players in every seat of a new table of ``game`` whose game is running."""
    clients = [StammtischClient(ends) for _ in range(seats)]
    for index, client in enumerate(clients):
        await client.login(f"p{index}")
    table = await clients[0].create_table(game, seats, join=True, turn_seconds=0)
    for index, client in enumerate(clients[1:], 1):
        await client.join(table.table_id, seat=index)
    for client in clients:
        await client.ready(table.table_id)
    await clients[0].wait_for_game(table.table_id)
    return clients, table.table_id


async def play_one(clients: list[StammtischClient], table_id: str, game: str,
                   rng: random.Random) -> tuple[int, int, dict[str, Any], list[dict[str, Any]]]:
    """The first seat with a legal move plays a heuristic one: (acknowledged seq, seat, action, events)."""
    bot = bot_levels(game)["heuristic"]()
    for seat, client in enumerate(clients):
        view = (await client.view(table_id)).view
        if view["legal"]:
            action = bot.choose(view, rng)
            update = await client.act(table_id, action)
            return update.seq, seat, action, update.events
    raise AssertionError("nobody to act")

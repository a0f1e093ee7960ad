"""A bot playing one seat through the real API, exactly as a client app would."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncGenerator

from shared.games.bots import Bot
from shared.sdk.client import RefusedAction, StammtischClient, Update


async def newer_updates(client: StammtischClient, table_id: str,
                        after_seq: int) -> AsyncGenerator[Update, None]:
    """Updates in order, skipping any not newer than the last one yielded."""
    last = after_seq
    async for update in client.updates(table_id, after_seq):
        if update.seq > last:
            last = update.seq
            yield update


async def play_seat(client: StammtischClient, table_id: str, bot: Bot, rng: random.Random,
                    think_seconds: float = 0.0, streamed: bool = False) -> Update:
    """Act whenever the seat has legal actions, until the game is over or its table was closed;
    returns the last update. ``streamed``: over one Play stream, else unary Act plus Subscribe.

    A refused action (a lost race, a turn clock that answered first) is not an
    error for a bot: it looks at the newest view and decides again.
    """
    current = await client.wait_for_game(table_id)
    if streamed:
        return await _play_streamed(client, current, bot, rng, think_seconds)
    stream = newer_updates(client, table_id, current.seq)
    refused_at = -1
    try:
        while not current.finished:
            if current.view.get("legal") and current.seq != refused_at:
                if think_seconds:
                    await asyncio.sleep(think_seconds)
                try:
                    current = await client.act(table_id, bot.choose(current.view, rng),
                                               round_no=current.view.get("round"))
                except RefusedAction:
                    refused_at = current.seq
                    current = await client.view(table_id)
                continue
            newer = await anext(stream)
            if newer.seq > current.seq:
                current = newer
    finally:
        await stream.aclose()
    return current


async def _play_streamed(client: StammtischClient, current: Update, bot: Bot, rng: random.Random,
                         think_seconds: float) -> Update:
    """:func:`play_seat` over a Play stream: an answer gives the seq, the stream its view."""
    refused_at = -1
    async with client.play(current.table_id, current.seq) as stream:
        while not current.finished:
            if current.view.get("legal") and current.seq != refused_at:
                if think_seconds:
                    await asyncio.sleep(think_seconds)
                try:
                    applied = await stream.act(bot.choose(current.view, rng),
                                               round_no=current.view.get("round"))
                except RefusedAction:
                    refused_at = current.seq
                    continue
                while current.seq < applied:
                    current = await stream.newest_update()
                continue
            current = await stream.newest_update()
    return current

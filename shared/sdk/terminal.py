"""`stammtisch play GAME`: a whole game in the terminal against bots (or people)."""

from __future__ import annotations

import asyncio
import contextlib

import grpc

from shared.games.catalog import entry
from shared.sdk.botplayer import newer_updates
from shared.sdk.client import Endpoints, RefusedAction, StammtischClient, Update
from shared.sdk.device import login_from_file
from shared.sdk.render import describe_events, render


async def _ask(prompt: str) -> str:
    return (await asyncio.to_thread(input, prompt)).strip()


async def _choose(update: Update) -> dict | None:  # type: ignore[type-arg]
    """Ask for one of the numbered legal actions; None to refresh the view."""
    legal = update.view.get("legal", [])
    while True:
        answer = await _ask(f"your move [1-{len(legal)}], Enter to refresh: ")
        if not answer:
            return None
        if answer.isdigit() and 1 <= int(answer) <= len(legal):
            return dict(legal[int(answer) - 1])
        print("  please type one of the numbers shown")


async def _send(client: StammtischClient, table_id: str, current: Update) -> int:
    """Ask for a move and send it; returns the sequence number to catch up to."""
    action = await _choose(current)
    try:
        if action:
            return (await client.act(table_id, action, round_no=current.view.get("round"))).seq
    except RefusedAction as refused:
        print(f"  refused: {refused.code}: {refused.message}")
    except grpc.aio.AioRpcError as err:
        if err.code() != grpc.StatusCode.RESOURCE_EXHAUSTED:
            raise
        print("  too fast: the server asks to slow down")
        await asyncio.sleep(1.0)
    return (await client.view(table_id)).seq


async def play_game(client: StammtischClient, table_id: str) -> Update:
    """Show every commit's events in order; whenever you have choices, ask for one and send it.

    Everything shown comes from the update stream, so the events of other
    seats that happened while you were thinking are never skipped.
    """
    current = await client.wait_for_game(table_id)
    me = current.seat
    print(render(current, me), flush=True)
    stream = newer_updates(client, table_id, current.seq)
    try:
        while not current.finished:
            target = await _send(client, table_id, current) if current.view.get("legal") \
                else current.seq + 1
            while current.seq < target:
                current = await anext(stream)
                print("\n".join(describe_events(current, me)), flush=True)
            print(render(current, me, fresh_events=False), flush=True)
    finally:
        await stream.aclose()
    return current


async def run(game: str, name: str, seats: int | None, bots: str, table_id: str | None,
              endpoints: Endpoints, turn_seconds: int, device: str | None = None) -> int:
    """Log in (as a guest, or as the lasting player of a device file), create or join a table,
    fill it with bots, play it to the end."""
    async with StammtischClient(endpoints) as client:
        if device:
            await login_from_file(client, device, name)
        else:
            await client.login(name)
        if table_id is None:
            options = {"turn_seconds": turn_seconds} if turn_seconds else {}
            table = await client.create_table(game, seats or entry(game).default_seats, join=True, **options)
            table_id = table.table_id
            for _ in range(len(table.seats) - 1):
                await client.add_bot(table_id, bots)
            print(f"table {table_id}: you and {len(table.seats) - 1} {bots} bot(s)")
        else:
            await client.join(table_id)
        await client.ready(table_id)
        try:
            final = await play_game(client, table_id)
        except (KeyboardInterrupt, EOFError):
            with contextlib.suppress(grpc.aio.AioRpcError):
                await client.leave(table_id)
            print("\nleft the table")
            return 1
        if final.closed:
            print(f"the table was closed ({final.closed}): nobody played for too long")
            return 1
        scores = final.view.get("scores")
        print(f"final scores: {scores}")
        return 0

"""Kill the whole server process mid-game: every acknowledged action survives, play goes on.

The stack runs as a child process (`stammtisch up`), as in production. It is
killed with SIGKILL (no graceful anything) while four clients play; a fresh
stack on the same Redis and NATS serves the same table, the clients resume
from the last update they saw, and the game finishes with every action the
first stack acknowledged still in the log.
"""

from __future__ import annotations

import asyncio
import random
import secrets
import signal
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from services.host.launch import start_stack
from shared.games.registry import bot_levels
from shared.sdk.botplayer import play_seat
from shared.sdk.client import Endpoints, StammtischClient, Update
from tests.support.stack import close_all, play_one, same_player, seated_players

pytestmark = pytest.mark.integration


async def _acknowledged_moves(clients: list[StammtischClient], table_id: str, count: int,
                              rng: random.Random) -> dict[int, tuple[int, dict[str, Any]]]:
    """Play ``count`` acknowledged moves; returns seq -> (seat, action) for each."""
    done: dict[int, tuple[int, dict[str, Any]]] = {}
    while len(done) < count:
        seq, seat, action, _events = await play_one(clients, table_id, "willi", rng)
        done[seq] = (seat, action)
    return done


async def test_a_killed_stack_loses_no_acknowledged_action(infra: tuple[str, str], tmp_path: Path) -> None:
    redis_url, nats_url = infra
    env = {"REDIS_URL": redis_url, "NATS_URL": nats_url, "STAMMTISCH_LOG_LEVEL": "warning",
           "STAMMTISCH_KEY_PREFIX": "crash" + uuid.uuid4().hex[:8],
           "STAMMTISCH_TOKEN_SECRET": secrets.token_urlsafe(32)}  # both stacks accept the clients' tokens
    first = start_stack(env, tmp_path / "first")
    clients: list[StammtischClient] = []
    try:
        clients, table_id = await seated_players(Endpoints.of(first.endpoints), "willi", 4, turn_seconds=0)
        acknowledged = await _acknowledged_moves(clients, table_id, 30, random.Random(7))
    finally:
        first.process.send_signal(signal.SIGKILL)
        first.process.wait()
        await close_all(clients)

    second = start_stack(env, tmp_path / "second")
    try:
        # Same players (tokens are signed with the shared secret), new server process.
        survivors = [same_player(client, Endpoints.of(second.endpoints)) for client in clients]
        log_view = await survivors[0].view(table_id)
        assert log_view.seq >= max(acknowledged)
        seen = [u async for u in _until(survivors[0].updates(table_id, 0), max(acknowledged))]
        for seq, (seat, _action) in acknowledged.items():
            assert any(e.get("seat") == seat for e in seen[seq - 1].events), seq
        finals = await asyncio.wait_for(asyncio.gather(*(
            play_seat(c, table_id, bot_levels("willi")["heuristic"](), random.Random(i))
            for i, c in enumerate(survivors))), 120)
        assert all(f.view["over"] for f in finals)
        async with StammtischClient(Endpoints.of(first.endpoints)) as ghost:
            with pytest.raises(grpc.aio.AioRpcError):  # the old process is really gone
                await ghost.view(table_id)
    finally:
        await close_all(survivors)
        second.stop()


async def _until(updates: AsyncIterator[Update], last_seq: int) -> AsyncIterator[Update]:
    async for update in updates:
        yield update
        if update.seq >= last_seq:
            return

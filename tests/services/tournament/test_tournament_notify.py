"""Tournament news for inboxes on NATS: "starting_soon" before start_at, "seated" per round."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
from google.protobuf.timestamp_pb2 import Timestamp

from services.tournament import notify
from shared.infra.runtime import Runtime
from shared.sdk import tournament as sdk
from tests.services.tournament.test_tournament import logged_in
from tests.services.tournament.test_tournament_life import settings, until  # noqa: F401  (fast bots)

pytestmark = pytest.mark.integration


async def test_starting_soon_and_seated_news(stack: dict[str, str], runtime: Runtime) -> None:
    clients = await logged_in(stack, 3)
    news: list[dict[str, object]] = []

    async def received(msg: object) -> None:
        news.append(json.loads(msg.data))  # type: ignore[attr-defined]

    for client in clients:
        await runtime.nats.subscribe(notify.subject(runtime, client.player_id), cb=received)
    start_at = Timestamp()
    start_at.FromSeconds(int(time.time()) + 3)
    created = await sdk.create_tournament(clients[0], "Bald", "willi-stich", "series", capacity=3,
                                          table_size=3, options={"start_round": 19}, start_at=start_at)
    tid = created.tournament_id
    for client in clients:
        await sdk.register(client, tid)
    watched: list[object] = []
    players = [asyncio.create_task(sdk.play_tournament(c, tid, sdk.bot_player("willi-stich", i),
                                                       watched.append if i == 0 else None))
               for i, c in enumerate(clients)]
    await asyncio.wait_for(asyncio.gather(*players), timeout=120)
    await until("news of all three", lambda: sum(1 for n in news if n["kind"] == "seated") == 3)
    soon = [n for n in news if n["kind"] == "starting_soon"]
    assert sorted(n["player_id"] for n in soon) == sorted(c.player_id for c in clients)
    assert all(n["tournament_id"] == tid and n["starts_at"] == start_at.seconds for n in soon)
    seated = {n["player_id"]: n for n in news if n["kind"] == "seated"}
    mine = next(w for w in watched if w.change == "seated")  # type: ignore[attr-defined]
    assert seated[clients[0].player_id]["table_id"] == mine.your_seat.table_id  # type: ignore[attr-defined]
    assert seated[clients[0].player_id]["seat"] == mine.your_seat.seat  # type: ignore[attr-defined]
    assert all(n["round"] == 1 and n["page"] == f"/tournaments/{tid}" for n in seated.values())
    changes = [w.change for w in watched]  # type: ignore[attr-defined]
    assert changes.count("starting_soon") == 1
    for client in clients:
        await client.close()

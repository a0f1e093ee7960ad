"""Every tournament's news reaches its players' inboxes: "starts soon" once and "seated" once
per round, with two clubs replicas listening (queue group) and a seating news repeated (once-keys)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time
from collections.abc import Mapping

import pytest
from google.protobuf.timestamp_pb2 import Timestamp

from services.host.runner import running_services
from services.tournament import notify
from shared.api.stammtisch.v1 import clubs_pb2 as K
from shared.config import Settings
from shared.infra.runtime import Runtime
from shared.sdk import tournament as sdk
from shared.sdk.client import Endpoints, StammtischClient
from tests.support.clubs import rpc, until

pytestmark = pytest.mark.integration
GAME = "mau-mau"
ROUNDS = 2


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return dataclasses.replace(settings, bot_delay_seconds=0.01)


async def kinds(client: object, kind: int) -> list[K.Notification]:
    inbox = await rpc(client, "ListInbox", page_size=200)  # type: ignore[arg-type]
    return [note for note in inbox.notifications if note.kind == kind]


async def test_two_players_hear_starting_soon_once_and_seated_once_per_round(
        stack: Mapping[str, str], settings: Settings, runtime: Runtime) -> None:
    async with running_services(settings, ["clubs"]):  # a second clubs replica
        clients = [StammtischClient(Endpoints.of(stack)) for _ in range(2)]
        for index, client in enumerate(clients):
            await client.login(f"p{index}")
        start_at = Timestamp()
        start_at.FromSeconds(int(time.time()) + 3)
        created = await sdk.create_tournament(clients[0], "Zwei Runden", GAME, "series", capacity=2,
                                              rounds=ROUNDS, table_size=2, start_at=start_at)
        tid = created.tournament_id
        for client in clients:
            await sdk.register(client, tid)
        players = [sdk.play_tournament(c, tid, sdk.bot_player(GAME, i)) for i, c in enumerate(clients)]
        await asyncio.wait_for(asyncio.gather(*players), timeout=180)

        async def everyone_told() -> bool:
            told = [await kinds(c, K.NOTIFICATION_KIND_TOURNAMENT_SEATED) for c in clients]
            return all(len(seated) >= ROUNDS for seated in told)
        await until(everyone_told)
        anna = clients[0].player_id
        first = (await kinds(clients[0], K.NOTIFICATION_KIND_TOURNAMENT_SEATED))[-1]
        repeated = {"kind": "seated", "tournament_id": tid, "name": "Zwei Runden", "player_id": anna,
                    "round": 1, "table": 1, "table_id": first.table_id, "seat": 0}
        await runtime.nats.publish(notify.subject(runtime, anna), json.dumps(repeated).encode())
        await asyncio.sleep(1.0)  # a second replica's copy, or the repeated news, would be there by now
        for client in clients:
            seated = await kinds(client, K.NOTIFICATION_KIND_TOURNAMENT_SEATED)
            assert len(seated) == ROUNDS
            assert sorted(note.text.split("round ")[1][0] for note in seated) == ["1", "2"]
            assert all(note.table_id.startswith(f"{tid}-r") for note in seated)
            soon = await kinds(client, K.NOTIFICATION_KIND_TOURNAMENT_STARTING_SOON)
            assert len(soon) == 1 and "Zwei Runden" in soon[0].text
        for client in clients:
            await client.close()

"""The director dies or races: the tournament goes on exactly once.

The tournament service runs as a child process (`stammtisch serve --service
tournament`), the rest of the stack in this process. SIGKILL takes the child
mid-round and again mid-seating (right after a round's seating is stored,
while its tables are being created and started); a fresh child on the same
port takes the lease over when it expires. Two directors in this process
racing the whole time never seat a round twice or start an extra game.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from services.host.runner import running_services
from services.tournament.audit import standings_from_logs
from services.tournament.store import LeaseLost, TournamentStore
from shared.api.stammtisch.v1 import tournament_pb2
from shared.config import Settings
from shared.infra.local import free_port
from shared.infra.runtime import Runtime
from shared.sdk import tournament as sdk
from shared.sdk.client import Endpoints, StammtischClient

pytestmark = pytest.mark.integration

STAMMTISCH = str(Path(sys.executable).parent / "stammtisch")
GAME_SERVICES = ["lobby", "engine", "arbiter", "scoring"]


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return dataclasses.replace(settings, bot_delay_seconds=0.01)


@pytest.fixture
async def games(settings: Settings) -> AsyncIterator[dict[str, str]]:
    """Everything but the tournament service, in this process."""
    async with running_services(settings, GAME_SERVICES) as running:
        yield {item.service.name: f"127.0.0.1:{item.port}" for item in running}


class DirectorProcess:
    """`stammtisch serve --service tournament` on a fixed port, restartable."""

    def __init__(self, settings: Settings, port: int, log_dir: Path) -> None:
        self.env = {**os.environ, "REDIS_URL": settings.redis_url, "NATS_URL": settings.nats_url,
                    "STAMMTISCH_KEY_PREFIX": settings.key_prefix,
                    "STAMMTISCH_TOKEN_SECRET": settings.token_secret, "STAMMTISCH_BIND": "127.0.0.1",
                    "STAMMTISCH_TOURNAMENT_PORT": str(port), "STAMMTISCH_BOT_DELAY": "0.01",
                    "STAMMTISCH_GRACE_SECONDS": "1"}
        self.port = port
        self.log_dir = log_dir
        self.process: subprocess.Popen[bytes] | None = None
        self.started = 0

    async def start(self) -> None:
        self.started += 1
        env = {**self.env, "STAMMTISCH_METRICS_PORT": str(free_port())}
        with (self.log_dir / f"director{self.started}.log").open("wb") as log:
            self.process = subprocess.Popen([STAMMTISCH, "serve", "--service", "tournament"], env=env,
                                            stdout=log, stderr=log)
        channel = grpc.aio.insecure_channel(f"127.0.0.1:{self.port}")
        try:
            await asyncio.wait_for(channel.channel_ready(), timeout=30)
        finally:
            await channel.close()

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@pytest.fixture
def director(settings: Settings, tmp_path: Path) -> Iterator[DirectorProcess]:
    child = DirectorProcess(settings, free_port(), tmp_path)
    yield child
    child.stop()


async def registered(games: dict[str, str], tournament: str, count: int,
                     **settings: Any) -> tuple[Endpoints, list[StammtischClient], str]:
    """Endpoints, ``count`` logged-in clients registered for a new Willi Stich series, its id."""
    endpoints = Endpoints(games["lobby"], games["engine"], games["arbiter"], games["scoring"], tournament)
    clients = [StammtischClient(endpoints) for _ in range(count)]
    for index, client in enumerate(clients):
        await client.login(f"p{index}")
    created = await sdk.create_tournament(clients[0], "Crash", "willi-stich", "series", capacity=count,
                                          **settings)
    for client in clients:
        await sdk.register(client, created.tournament_id)
    return endpoints, clients, created.tournament_id


async def test_sigkill_mid_round_and_mid_seating_loses_and_doubles_nothing(
        games: dict[str, str], director: DirectorProcess, runtime: Runtime) -> None:
    await director.start()
    endpoints, clients, tid = await registered(games, f"127.0.0.1:{director.port}", 8, rounds=3,
                                               games_per_round=2, table_size=4, options={"start_round": 18})
    kills: list[str] = []

    async def killer(news: tournament_pb2.WatchTournamentResponse) -> None:
        mid_round = news.change == "game_finished" and news.result.round == 1 and not kills
        mid_seating = news.change == "seated" and news.round.round == 2 and len(kills) == 1
        if mid_round or mid_seating:
            kills.append(news.change)
            director.kill()
            await director.start()

    watcher = StammtischClient(endpoints)
    await watcher.login("watcher")
    pending: list[asyncio.Task[None]] = []
    players = [asyncio.create_task(sdk.play_tournament(client, tid, sdk.bot_player("willi-stich", i)))
               for i, client in enumerate(clients)]
    watching = asyncio.create_task(sdk.play_tournament(
        watcher, tid, sdk.bot_player("willi-stich", 99),
        lambda news: pending.append(asyncio.create_task(killer(news)))))
    await sdk.start(clients[0], tid)
    await asyncio.wait_for(asyncio.gather(*players, watching), timeout=300)
    await asyncio.gather(*pending)
    assert kills == ["game_finished", "seated"]

    store = TournamentStore(runtime)
    tournament = await store.get(tid)
    assert tournament.status == "finished" and len(tournament.rounds) == 3
    history = [entry["change"] for _seq, entry in await store.history(tid, 0, count=10_000)]
    assert history.count("seated") == 3 and history.count("round_finished") == 3
    assert history.count("game_finished") == 3 * 2 * 2  # rounds x tables x games, each once
    for round_ in tournament.rounds:
        assert sorted(p for seats in round_.tables for p in seats) == sorted(c.player_id for c in clients)
    reported = await sdk.standings(clients[0], tid)
    assert [(line.player_id, line.points_exact) for line in reported.standings] == \
        await standings_from_logs(runtime, tournament)
    for client in [*clients, watcher]:
        await client.close()


async def test_racing_directors_never_double_seat(games: dict[str, str], settings: Settings,
                                                   runtime: Runtime) -> None:
    async with running_services(settings, ["tournament", "tournament", "tournament"]) as replicas:
        _endpoints, clients, tid = await registered(
            games, f"127.0.0.1:{replicas[0].port}", 6, rounds=2, games_per_round=1, table_size=3,
            options={"start_round": 19})
        players = [asyncio.create_task(sdk.play_tournament(c, tid,
                                                           sdk.bot_player("willi-stich", i)))
                   for i, c in enumerate(clients)]
        await sdk.start(clients[0], tid)
        await asyncio.wait_for(asyncio.gather(*players), timeout=200)
    store = TournamentStore(runtime)
    history = [entry["change"] for _seq, entry in await store.history(tid, 0, count=1000)]
    assert history.count("seated") == 2 and history.count("game_finished") == 4
    tournament = await store.get(tid)
    for round_ in tournament.rounds:
        for index in range(len(round_.tables)):
            table = await runtime.redis.hget(
                runtime.table_key(tournament.table_id(round_.number, index), "lobby"), "doc")
            assert b'"games_played":1' in table  # exactly one game started per table and round
    # A director without the lease cannot write, whatever it computed.
    await store.hold(tid, "holder-a", 5.0)
    with pytest.raises(LeaseLost):
        await store.change(tid, lambda t: {"change": "noop"}, holder="holder-b")
    for client in clients:
        await client.close()

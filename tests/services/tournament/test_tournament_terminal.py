"""A person's terminal seat in a tournament, in this process: piped input over several rounds.

Regressions of `stammtisch play --tournament` (issue 12): the seating of a
round is announced before the director has created its tables, the same
input must serve every game, and a seat that fails must end the play at once
rather than when its round ends without it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import time
from collections.abc import Iterator

import pytest

from shared.api.stammtisch.v1 import tournament_pb2
from shared.config import Settings
from shared.sdk import tournament as sdk
from shared.sdk.client import StammtischClient
from shared.sdk.terminal import LineReader, play_game
from tests.services.tournament.test_tournament import logged_in

pytestmark = pytest.mark.integration


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return dataclasses.replace(settings, bot_delay_seconds=0.01)


@pytest.fixture
def piped_input() -> Iterator[int]:
    """A descriptor to read from: every prompt answered "1" (always legal), then end of input."""
    read_end, write_end = os.pipe()
    os.write(write_end, b"1\n" * 2000)
    os.close(write_end)
    yield read_end
    os.close(read_end)


async def a_series(clients: list[StammtischClient], rounds: int) -> str:
    created = await sdk.create_tournament(clients[0], "Terminal", "willi-stich", "series", capacity=3,
                                          rounds=rounds, games_per_round=2, table_size=3,
                                          options={"start_round": 19})
    for client in clients:
        await sdk.register(client, created.tournament_id)
    return created.tournament_id


async def test_a_terminal_seat_plays_every_round_from_one_input(stack: dict[str, str],
                                                                piped_input: int) -> None:
    person, *bots = await logged_in(stack, 3)
    tid = await a_series([person, *bots], rounds=3)
    reader = LineReader(piped_input)
    # Before the start no table exists: a seat announced ahead of its table waits for it.
    early = asyncio.create_task(play_game(person, f"{tid}-r1-t1", reader))
    await asyncio.sleep(1.0)
    assert not early.done(), "the seat gave up on a table not created yet"
    early.cancel()
    played: list[str] = []

    async def terminal(client: StammtischClient, table_id: str) -> None:
        final = await play_game(client, table_id, reader)
        assert final.finished
        played.append(table_id)

    news: list[tournament_pb2.WatchTournamentResponse] = []
    players = [asyncio.create_task(sdk.play_tournament(person, tid, terminal, news.append)),
               *(asyncio.create_task(sdk.play_tournament(bot, tid, sdk.bot_player("willi-stich", index)))
                 for index, bot in enumerate(bots))]
    await sdk.start(person, tid)
    await asyncio.wait_for(asyncio.gather(*players), timeout=90)
    reader.close()
    assert news[-1].change == "finished"
    assert played == [f"{tid}-r{number}-t1" for number in (1, 1, 2, 2, 3, 3)]
    for client in (person, *bots):
        await client.close()


async def test_a_failing_seat_ends_the_play_at_once(stack: dict[str, str]) -> None:
    person, *bots = await logged_in(stack, 3)
    tid = await a_series([person, *bots], rounds=1)

    async def broken(client: StammtischClient, table_id: str) -> None:
        await client.wait_for_game(table_id)
        raise EOFError  # the person's input ended

    others = [asyncio.create_task(sdk.play_tournament(bot, tid, sdk.bot_player("willi-stich", index)))
              for index, bot in enumerate(bots)]
    await sdk.start(person, tid)
    # The person's seat waits for them on a 60 s clock: their round cannot end for a minute.
    began = time.monotonic()
    with pytest.raises(EOFError):
        await asyncio.wait_for(sdk.play_tournament(person, tid, broken), timeout=30)
    assert time.monotonic() - began < 15, "the failed seat was noticed only when giving up"
    for task in others:
        task.cancel()
    await asyncio.gather(*others, return_exceptions=True)
    for client in (person, *bots):
        await client.close()

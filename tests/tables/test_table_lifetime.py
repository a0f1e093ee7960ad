"""Every table ends in bounded time, whatever its clients do (shared/tables/README.md, "Table lifetime").

Real Redis, NATS and gRPC; the limits are shortened to seconds so that the
rules act within a test. What is checked is what a client sees: the game
stream's ``table_closed``, refused actions, the lobby's "closed" news and the
table gone from the lobby, plus the Redis indexes that must forget it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
import time
from collections.abc import AsyncIterator, Sequence

import grpc
import pytest

from services.lobby.lifetime import CLOCK_LAG_SECONDS, TableLifetime
from services.lobby.model import LobbyTable, SeatState, Status
from services.lobby.news import TableNews
from services.lobby.store import TableRepository
from shared.api.stammtisch.v1 import lobby_pb2
from shared.config import Settings
from shared.games.registry import bot_levels, engine_class
from shared.games.simulate import play_game
from shared.infra.runtime import Runtime
from shared.sdk.botplayer import play_seat
from shared.sdk.client import Endpoints, RefusedAction, StammtischClient, Update
from shared.tables.clocks import IDLE_KEY, ROUND_PREFIX, deadline_policy
from shared.tables.records import TableMeta
from shared.tables.store import TableStore
from tests.support.stack import bot_table, eventually, logged_in

pytestmark = pytest.mark.integration

IDLE = 1.5
WAITING = 1.5
#: Generous bounds for a loaded machine; the rules themselves act after IDLE or WAITING.
PATIENCE = 30.0


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """Lifetimes of seconds; bots move quickly."""
    return dataclasses.replace(settings, idle_close_seconds=IDLE, waiting_close_seconds=WAITING,
                               bot_delay_seconds=0.05)


async def table_gone(client: StammtischClient, table_id: str) -> bool:
    """True once the lobby answers NOT_FOUND for the table."""
    try:
        await client.get_table(table_id)
    except grpc.aio.AioRpcError as err:
        assert err.code() == grpc.StatusCode.NOT_FOUND
        return True
    return False


async def lobby_news(client: StammtischClient, table_id: str, into: list[tuple[str, str]]) -> None:
    """(change, text) of every WatchTable message until the stream ends."""
    async for reply in client.watch(table_id):
        into.append((reply.change, reply.text))


async def game_until_closed(client: StammtischClient, table_id: str) -> list[Update]:
    """The table's game stream up to its ``table_closed`` update."""
    seen: list[Update] = []
    async for update in client.updates(table_id):
        seen.append(update)
        if any(event["type"] == "table_closed" for event in update.events):
            return seen
    raise AssertionError("the game stream ended without table_closed")


async def not_indexed(runtime: Runtime, game: str, table_id: str, group: str) -> None:
    """Neither the live-table nor the clocks index holds the table any more."""
    store = TableStore(runtime, deadline_policy(0.0, IDLE))
    shard = store.shard_of(table_id)
    assert await runtime.redis.zscore(store.live_key(game, shard), table_id) is None
    assert await runtime.redis.zscore(runtime.shard_key("clocks", shard, group), table_id) is None


# -- idle games ----------------------------------------------------------------------------------


async def test_a_turn_based_game_without_a_clock_is_closed_when_nobody_plays(
        stack: dict[str, str], runtime: Runtime) -> None:
    async with logged_in(Endpoints.of(stack), "P0") as (anna,):
        table_id = await bot_table(anna, "willi-wacker", 3, turn_seconds=0)
        news: list[tuple[str, str]] = []
        watcher = asyncio.create_task(lobby_news(anna, table_id, news))
        # The bots play up to Anna's turn; with no turn clock nothing else ever moves the game.
        seen = await asyncio.wait_for(game_until_closed(anna, table_id), PATIENCE)
        closing = seen[-1]
        assert closing.events == [{"type": "table_closed", "reason": "idle"}]
        assert closing.deadlines == {}
        assert closing.view["to_act"] == [closing.seat]  # it was her turn
        with pytest.raises(RefusedAction) as refused:
            await anna.act(table_id, closing.view["legal"][0])
        assert refused.value.code == "GAME_OVER"
        await eventually(lambda: table_gone(anna, table_id), PATIENCE)
        await asyncio.wait_for(watcher, PATIENCE)
        assert news[-1] == ("closed", "idle")
        await not_indexed(runtime, "willi-wacker", table_id, "engine")
        head = await TableStore(runtime, deadline_policy(0.0, IDLE)).head(table_id)
        assert head.meta.closed == "idle" and head.seq == closing.seq


async def test_an_api_bot_stops_playing_when_its_table_is_closed(stack: dict[str, str]) -> None:
    async with logged_in(Endpoints.of(stack), "P0", "P1") as (anna, ben):
        table = await anna.create_table("willi-wacker", 3, join=True, turn_seconds=0)
        await ben.join(table.table_id)
        await anna.add_bot(table.table_id)
        await asyncio.gather(anna.ready(table.table_id), ben.ready(table.table_id))
        # Ben (an API bot) plays his turns; the game stops at Anna's, who never plays.
        bot = bot_levels("willi-wacker")["heuristic"]()
        last = await asyncio.wait_for(play_seat(ben, table.table_id, bot, random.Random(1)),
                                      PATIENCE)
        assert last.closed == "idle" and last.finished and not last.view["over"]
        assert (await anna.view(table.table_id)).closed == "idle"  # GetView tells it too


async def test_a_game_only_stand_in_bots_still_play_is_closed(stack: dict[str, str],
                                                                runtime: Runtime) -> None:
    async with logged_in(Endpoints.of(stack), "P0") as (anna,):
        table_id = await bot_table(anna, "willi-wacker", 3, turn_seconds=60)
        left_at = (await anna.view(table_id)).seq
        await anna.leave(table_id)  # a bot takes her seat over: only the clock plays now
        seen = await asyncio.wait_for(game_until_closed(anna, table_id), PATIENCE)
        assert seen[-1].events == [{"type": "table_closed", "reason": "idle"}]
        bot_moves = [u for u in seen if u.seq > left_at and u.events[0]["type"] != "seat_bot"]
        assert len(bot_moves) > 1, "the bots kept playing until the table was closed"
        assert not seen[-1].view["over"]
        await eventually(lambda: table_gone(anna, table_id), PATIENCE)
        await not_indexed(runtime, "willi-wacker", table_id, "engine")


async def test_a_person_acting_keeps_the_game_open(stack: dict[str, str], runtime: Runtime) -> None:
    async with logged_in(Endpoints.of(stack), "P0", "P1") as (anna, ben):
        table = await anna.create_table("wie-waldi", 2, join=True)
        await ben.join(table.table_id)
        await asyncio.gather(anna.ready(table.table_id), ben.ready(table.table_id))
        await anna.wait_for_game(table.table_id)
        # Anna keeps drawing and returning for longer than the idle limit; Ben does nothing.
        until = time.monotonic() + 2 * IDLE
        while time.monotonic() < until:
            view = (await anna.view(table.table_id)).view
            action = {"type": "return"} if view["hand"] else {"type": "draw", "pile": 0}
            await anna.act(table.table_id, action, round_no=view["round"])
            await asyncio.sleep(0.1)
        assert (await anna.get_table(table.table_id)).status == lobby_pb2.TABLE_STATUS_PLAYING
        head = await TableStore(runtime, deadline_policy(0.0, IDLE)).head(table.table_id)
        assert not head.meta.closed and head.deadlines[IDLE_KEY] > time.time()


# -- tables with no game running -----------------------------------------------------------------


async def test_a_table_that_never_starts_expires_however_busy_its_chat(stack: dict[str, str]) -> None:
    async with logged_in(Endpoints.of(stack), "P0", "P1") as (anna, ben):
        table = await anna.create_table("willi", 4, join=True)
        await ben.join(table.table_id)
        news: list[tuple[str, str]] = []
        watcher = asyncio.create_task(lobby_news(anna, table.table_id, news))
        created = time.monotonic()

        async def chatting_until_gone() -> bool:
            try:
                await ben.chat(table.table_id, "noch ein Bier?")
            except grpc.aio.AioRpcError as err:
                assert err.code() == grpc.StatusCode.NOT_FOUND
                return await table_gone(anna, table.table_id)
            return False

        await eventually(chatting_until_gone, PATIENCE)
        assert time.monotonic() - created >= WAITING
        await asyncio.wait_for(watcher, PATIENCE)
        assert "chat" in [change for change, _ in news]
        assert news[-1] == ("closed", "expired")
        assert table.table_id not in [t.table_id for t in await anna.list_tables("willi")]


def _lobby_table(table_id: str, game: str, status: Status, games_played: int) -> LobbyTable:
    seats = [SeatState("p0", "Anna"), SeatState(name="Bot", ready=True, bot="heuristic"),
             SeatState(name="Bot", ready=True, bot="heuristic")]
    return LobbyTable(table_id, game, {}, 0.0, seats, time.time(), status=status,
                      games_played=games_played)


async def _stored(runtime: Runtime, table: LobbyTable, finished: bool) -> TableStore:
    """The table's lobby document and a game head (finished or just dealt) in Redis."""
    await TableRepository(runtime).add(table)
    cls = engine_class(table.game)
    bots = [bot_levels(table.game)["heuristic"]() for _ in table.seats]
    game = play_game(cls, bots, seed=3) if finished else cls.new(len(table.seats), {}, 3)
    store = TableStore(runtime, deadline_policy(0.0, IDLE))
    meta = TableMeta(table.table_id, table.game, ["p0", "", ""], game_no=table.games_played)
    await store.create(meta, game, [{"type": "game_started"}])
    return store


async def test_a_table_between_games_expires_after_its_last_game_ended(runtime: Runtime) -> None:
    lifetime = TableLifetime(runtime, TableRepository(runtime), TableNews(runtime))
    table = _lobby_table("between", "willi-wacker", Status.BETWEEN_GAMES, games_played=1)
    store = await _stored(runtime, table, finished=True)
    ended = (await store.head(table.table_id)).at
    await lifetime.look_at(table.table_id, ended + WAITING - 0.1)
    assert await runtime.redis.zscore(lifetime.key, table.table_id) == pytest.approx(ended + WAITING)
    await TableRepository(runtime).get(table.table_id)  # still there
    await lifetime.look_at(table.table_id, ended + WAITING)
    assert await runtime.redis.zscore(lifetime.key, table.table_id) is None
    assert await TableRepository(runtime).list("willi-wacker", open_only=False, limit=10) == []


async def test_a_gone_table_is_forgotten_and_does_not_hold_up_the_sweep(runtime: Runtime) -> None:
    lifetime = TableLifetime(runtime, TableRepository(runtime), TableNews(runtime))
    table = _lobby_table("expired", "willi-wacker", Status.WAITING, games_played=0)
    table.created_at -= 60  # never started, long past its waiting limit
    await TableRepository(runtime).add(table)
    await runtime.redis.zadd(lifetime.key, {"gone": 1, table.table_id: 2})  # "gone" comes first
    assert not await lifetime.sweep()  # only NotFound means gone; Busy would fail the sweep
    assert await runtime.redis.zcard(lifetime.key) == 0
    assert await TableRepository(runtime).list("willi-wacker", open_only=False, limit=10) == []


async def test_a_running_game_is_looked_at_again_after_its_idle_deadline(runtime: Runtime) -> None:
    lifetime = TableLifetime(runtime, TableRepository(runtime), TableNews(runtime))
    table = _lobby_table("playing", "willi-wacker", Status.PLAYING, games_played=1)
    store = await _stored(runtime, table, finished=False)
    idle_at = (await store.head(table.table_id)).deadlines[IDLE_KEY]
    # However late the lobby looks, a game its clock has not closed stays open.
    await lifetime.look_at(table.table_id, idle_at + 60)
    assert await runtime.redis.zscore(lifetime.key, table.table_id) == pytest.approx(
        idle_at + 60 + CLOCK_LAG_SECONDS)
    assert (await TableRepository(runtime).get(table.table_id)).status == Status.PLAYING


# -- Wie Waldi -----------------------------------------------------------------------------------


async def waldi_table(clients: Sequence[StammtischClient], **options: int) -> str:
    """A started Wie Waldi table of these players (``options``: the game's), from the lobby."""
    table = await clients[0].create_table("wie-waldi", len(clients), join=True, options=options)
    for client in clients[1:]:
        await client.join(table.table_id)
    await asyncio.gather(*(client.ready(table.table_id) for client in clients))
    await clients[0].wait_for_game(table.table_id)
    return table.table_id


async def test_a_wie_waldi_table_has_a_round_time_limit_by_default(stack: dict[str, str],
                                                                    runtime: Runtime) -> None:
    async with logged_in(Endpoints.of(stack), "P0", "P1") as clients:
        table_id = await waldi_table(clients)
        start = await clients[0].view(table_id)
        head = await TableStore(runtime, deadline_policy(0.0, IDLE)).head(table_id)
        assert start.view["round_seconds"] == 180
        assert head.deadlines[f"{ROUND_PREFIX}1"] == pytest.approx(head.at + 180)
        assert start.deadlines == {-1: pytest.approx(head.at + 180, abs=1e-3)}


async def test_a_wie_waldi_game_of_players_who_only_draw_ends_by_its_round_limits(
        stack: dict[str, str]) -> None:
    async with logged_in(Endpoints.of(stack), "P0", "P1") as clients:
        table_id = await waldi_table(clients, round_seconds=1)

        async def only_draw(client: StammtischClient) -> None:
            while True:
                view = (await client.view(table_id)).view
                if view["over"]:
                    return
                action = {"type": "return"} if view["hand"] else {"type": "draw", "pile": 1}
                try:
                    await client.act(table_id, action, round_no=view["round"])
                except RefusedAction as refused:  # the round ended under the action
                    assert refused.code in ("STALE", "GAME_OVER")

        await asyncio.wait_for(asyncio.gather(*(only_draw(c) for c in clients)), PATIENCE)
        log = [u async for u in _whole_game(clients[0], table_id)]
        ends = [e for u in log for e in u.events if e["type"] == "round_over"]
        assert [(e["round"], e["end"]) for e in ends] == [(1, "time_up"), (2, "time_up"),
                                                          (3, "time_up")]
        assert log[-1].view["over"] and log[-1].events[-1]["type"] == "game_over"


async def _whole_game(client: StammtischClient, table_id: str) -> AsyncIterator[Update]:
    async for update in client.updates(table_id):
        yield update
        if update.view.get("over"):
            return

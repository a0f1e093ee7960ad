"""What the integration tests share: SDK clients of a running stack, a table's stored log, polling.

Not a test module. The stack fixtures (tests/conftest.py) give service name ->
address maps; ``Endpoints.of`` turns one into the clients' endpoints.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import random
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import nats

from services.host.runner import running_services
from services.scoring.store import ScoreStore
from shared.config import SERVICE_NAMES, Settings
from shared.games.registry import bot_levels
from shared.infra.runtime import Runtime, results_stream
from shared.sdk.botplayer import play_seat
from shared.sdk.client import Endpoints, StammtischClient
from shared.tables.announce import result_messages
from shared.tables.clocks import deadline_policy
from shared.tables.records import CommitRecord
from shared.tables.store import Change, TableStore


async def log_in(places: Endpoints | Sequence[Endpoints], *names: str) -> list[StammtischClient]:
    """A logged-in client per name; with several endpoints, client i uses ``places[i % len]``."""
    spread = [places] if isinstance(places, Endpoints) else list(places)
    clients = [StammtischClient(spread[i % len(spread)]) for i in range(len(names))]
    await asyncio.gather(*(client.login(name) for client, name in zip(clients, names, strict=True)))
    return clients


@asynccontextmanager
async def logged_in(places: Endpoints | Sequence[Endpoints],
                    *names: str) -> AsyncIterator[list[StammtischClient]]:
    """:func:`log_in` for the block; every client is closed after it."""
    clients = await log_in(places, *names)
    try:
        yield clients
    finally:
        await close_all(clients)


def same_player(client: StammtischClient, endpoints: Endpoints) -> StammtischClient:
    """The same player through other endpoints (a second device, a reconnect, a new server)."""
    other = StammtischClient(endpoints)
    other.token, other.player_id, other.name = client.token, client.player_id, client.name
    return other


async def close_all(clients: Sequence[StammtischClient]) -> None:
    """Close every client's channels."""
    await asyncio.gather(*(client.close() for client in clients))


async def seated_table(clients: Sequence[StammtischClient], game: str, turn_seconds: int | None = None,
                       **options: Any) -> str:
    """A new table of ``game`` (``options``: the game's options) with client i at seat i,
    everyone ready: the game starts."""
    table = await clients[0].create_table(game, len(clients), join=True, options=options,
                                          turn_seconds=turn_seconds)
    for seat, client in enumerate(clients[1:], 1):
        await client.join(table.table_id, seat=seat)
    for client in clients:
        await client.ready(table.table_id)
    return table.table_id


async def seated_players(places: Endpoints | Sequence[Endpoints], game: str, seats: int,
                         **options: Any) -> tuple[list[StammtischClient], str]:
    """Logged-in players p0, p1, ... in every seat of a new table of ``game``, its game running."""
    clients = await log_in(places, *(f"p{seat}" for seat in range(seats)))
    table_id = await seated_table(clients, game, **options)
    await clients[0].wait_for_game(table_id)
    return clients, table_id


async def play_one(clients: Sequence[StammtischClient], table_id: str, game: str,
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


async def bot_table(client: StammtischClient, game: str, seats: int, turn_seconds: int | None = None,
                    **options: Any) -> str:
    """A table of the client and server bots (``options``: the game's options), started."""
    table = await client.create_table(game, seats, join=True, options=options, turn_seconds=turn_seconds)
    for _ in range(seats - 1):
        await client.add_bot(table.table_id)
    await client.ready(table.table_id)
    await client.wait_for_game(table.table_id)
    return table.table_id


@asynccontextmanager
async def quick_stack(settings: Settings) -> AsyncIterator[Endpoints]:
    """Every service in this process, server bots acting without delay (whole games in
    seconds)."""
    fast = dataclasses.replace(settings, bot_delay_seconds=0.0)
    async with running_services(fast, SERVICE_NAMES) as running:
        yield Endpoints.of({item.service.name: f"127.0.0.1:{item.port}" for item in running})


async def finish_game(people: Sequence[StammtischClient], table_id: str, game: str, seed: int = 1) -> None:
    """The people play the table's game to its end with the heuristic bot."""
    await asyncio.gather(*(play_seat(person, table_id, bot_levels(game)["heuristic"](),
                                     random.Random(seed + index))
                           for index, person in enumerate(people)))


def first_legal_move(head: CommitRecord | None) -> Change:
    """A change for :meth:`TableStore.commit`: the first seat to act makes its first legal move."""
    assert head is not None
    game = head.game()
    seat = game.to_act()[0]
    action = game.legal_actions(seat)[0]
    return Change(game, game.apply(seat, action), head.meta, seat, action)


async def stored_log(runtime: Runtime, table_id: str) -> list[CommitRecord]:
    """Every commit of the table in Redis, oldest first."""
    store = TableStore(runtime, deadline_policy(0.0, runtime.settings.idle_close_seconds))
    return await store.log_after(table_id, 0, limit=100_000)


async def results_on_stream(settings: Settings) -> Counter[str]:
    """Nats-Msg-Id of every message on the RESULTS stream, counted."""
    client = await nats.connect(servers=settings.nats_servers)
    try:
        js = client.jetstream()
        total = (await js.stream_info(str(results_stream(settings).name))).state.messages
        sub = await js.subscribe(f"{settings.key_prefix}.results.>", ordered_consumer=True)
        ids: Counter[str] = Counter()
        for _ in range(total):
            message = await sub.next_msg(timeout=10)
            ids[(message.headers or {})["Nats-Msg-Id"]] += 1
        return ids
    finally:
        await client.close()


async def settled(probe: Callable[[], Awaitable[bool]], timeout: float = 30.0) -> None:
    """Until the probe says yes, or the timeout; unlike :func:`eventually` it does not fail, so
    that the assertions after it tell what is missing."""
    deadline = time.monotonic() + timeout
    while not await probe() and time.monotonic() < deadline:
        await asyncio.sleep(0.5)


@dataclass
class Delivery:
    """What became of the results some tables committed: on the RESULTS stream and in scoring."""

    expected: set[str]
    on_stream: Counter[str]
    recorded: list[int]

    @property
    def lost(self) -> set[str]:
        """Results committed but not on the stream."""
        return self.expected - set(self.on_stream)

    @property
    def doubled(self) -> set[str]:
        """Results on the stream more than once."""
        return {msg_id for msg_id, count in self.on_stream.items() if count > 1}


async def delivered_results(runtime: Runtime, table_ids: Sequence[str]) -> Delivery:
    """The Nats-Msg-Id of every result in the tables' logs, those on the stream once the outbox
    is empty (the relay re-publishes what was not acknowledged), and how many records scoring
    has per table once it has some for each."""
    expected = {msg_id for table_id in table_ids for record in await stored_log(runtime, table_id)
                for _kind, msg_id, _payload in result_messages(record)}

    async def outbox_empty() -> bool:
        return not await outbox_size(runtime)

    await settled(outbox_empty)
    on_stream = await results_on_stream(runtime.settings)
    scores = ScoreStore(runtime)

    async def all_scored() -> bool:
        return all([await scores.table_results(table_id) for table_id in table_ids])

    await settled(all_scored)
    return Delivery(expected, on_stream, [len(await scores.table_results(t)) for t in table_ids])


async def outbox_size(runtime: Runtime) -> int:
    """Results committed but not yet acknowledged by JetStream, in every shard of the outbox."""
    store = TableStore(runtime, deadline_policy(0.0, runtime.settings.idle_close_seconds))
    return sum([await runtime.redis.zcard(store.outbox_key(shard)) for shard in runtime.shards.all()])


async def eventually(check: Callable[[], Any], timeout: float = 15.0,
                     what: str = "the condition") -> Any:
    """Poll ``check`` (plain or async) until it returns something truthy, and return that.

    ``timeout`` only bounds a failing wait; a passing one returns as soon as it can.
    """
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what} (last: {value!r})")
        await asyncio.sleep(0.02)

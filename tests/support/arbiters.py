"""Two arbiter replicas, players spread over them, rigged tables and checks of what a table stored.

Not a test module (the helpers every integration test shares are in
tests/support/stack.py). Tables the lobby starts are used wherever the deal does
not matter; a race needs a deal that puts the racing cards on top of the
piles, so those tables are created directly in the table store (as the lobby
would: ``TableStore.create`` plus ``Announcer.announce``).
"""

from __future__ import annotations

import asyncio
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

import grpc

from shared.api.stammtisch.v1 import arbiter_pb2
from shared.games.base import Game
from shared.games.waldi.cards import card_sets
from shared.games.waldi.deal import PILE_SIZE
from shared.games.waldi.engine import WieWaldi
from shared.infra.runtime import Runtime
from shared.rpc.actions import action_proto
from shared.rpc.errors import rule_code_name, rule_violation_of
from shared.sdk.client import Endpoints, StammtischClient, Update
from shared.tables.announce import Announcer
from shared.tables.clocks import deadline_policy
from shared.tables.records import TableMeta
from shared.tables.store import TableStore
from tests.support.stack import log_in, same_player

SEATS = 4
GAME = "wie-waldi"


async def players(stack: Mapping[str, str], arbiters: Sequence[str],
                  count: int = SEATS) -> list[StammtischClient]:
    """Logged-in clients; client i plays through arbiter replica ``i % len(arbiters)``."""
    return await log_in([Endpoints.of(stack, arbiter=arbiter) for arbiter in arbiters],
                        *(f"P{i}" for i in range(count)))


def second_devices(clients: Sequence[StammtischClient], stack: Mapping[str, str],
                   arbiters: Sequence[str]) -> list[StammtischClient]:
    """Each player again, through the next arbiter replica (a second device, or a reconnect)."""
    return [same_player(client, Endpoints.of(stack, arbiter=arbiters[(i + 1) % len(arbiters)]))
            for i, client in enumerate(clients)]


# -- tables created in the store -------------------------------------------------------------


def rigged_piles(tops: Sequence[Mapping[int, str]]) -> list[list[list[str]]]:
    """Each seat's set dealt into 3 piles, with ``tops[seat][pile]`` on top of that pile."""
    deal = []
    for seat, wanted in enumerate(tops):
        rest = list(card_sets().sets[seat])
        for card in wanted.values():
            rest.remove(card)
        piles = []
        for pile in range(3):
            top = [wanted[pile]] if pile in wanted else []
            take = PILE_SIZE - len(top)
            piles.append(top + rest[:take])
            rest = rest[take:]
        deal.append(piles)
    return deal


async def store_table(runtime: Runtime, clients: Sequence[StammtischClient], game: Game,
                      seed: int = 7, options: Mapping[str, Any] | None = None) -> str:
    """Start ``game`` at a new table of these players, as the lobby would."""
    store = TableStore(runtime, deadline_policy(runtime.settings.bot_delay_seconds,
                                                     runtime.settings.idle_close_seconds))
    table_id = uuid.uuid4().hex
    meta = TableMeta(table_id, GAME, [client.player_id for client in clients], seed=seed,
                     options=dict(options or {}))
    record = await store.create(meta, game, [{"type": "game_started"}])
    await Announcer(runtime, store).announce(record)
    return table_id


def rigged_game(tops: Sequence[Mapping[int, str]]) -> WieWaldi:
    """A fresh game whose first round is dealt with these top cards."""
    return WieWaldi.new(SEATS, {}, 7, {"rounds": [{"piles": rigged_piles(tops)}]})


async def attempt(client: StammtischClient, table_id: str, action: Mapping[str, Any],
                  round_no: int | None = None) -> int | str:
    """One Act over the raw API: the commit's seq, or the rules code of the refusal."""
    try:
        reply = await client.arbiter.Act(arbiter_pb2.ArbiterServiceActRequest(
            table_id=table_id, action_id=uuid.uuid4().hex, action=action_proto(action),
            round=round_no), metadata=client.auth)
    except grpc.aio.AioRpcError as err:
        violation = rule_violation_of(err)
        if violation is None:
            raise
        return rule_code_name(violation)
    return reply.update.seq


@asynccontextmanager
async def following(client: StammtischClient, table_id: str,
                    after_seq: int = 0) -> AsyncIterator[list[Update]]:
    """Collect the client's update stream of a table in the background."""
    seen: list[Update] = []
    call = client.arbiter.Subscribe(arbiter_pb2.ArbiterServiceSubscribeRequest(
        table_id=table_id, after_seq=after_seq), metadata=client.auth)

    async def collect() -> None:
        async for reply in call:
            seen.append(Update.from_proto(reply.update))

    task = asyncio.create_task(collect())
    try:
        yield seen
    finally:
        call.cancel()
        await asyncio.gather(task, return_exceptions=True)


# -- what the store holds --------------------------------------------------------------------


def full_deck(seats: int = SEATS) -> Counter[tuple[int, str]]:
    """Every card of the table once, told apart by its set (= the seat that owns it)."""
    return Counter((seat, card) for seat in range(seats) for card in card_sets().sets[seat])


def card_places(state: Mapping[str, Any]) -> Counter[tuple[int, str]]:
    """(set, card) of every card in a piles, hands, dogs (by who laid it) and the discards."""
    places: Counter[tuple[int, str]] = Counter()
    for seat, piles in enumerate(state["piles"]):
        places.update((seat, card) for pile in piles for card in pile)
    places.update((seat, card) for seat, card in enumerate(state["held"]) if card is not None)
    for dog in state["dogs"]:
        places.update(zip(dog["by"], dog["cards"], strict=True))
    for seat, cards in enumerate(state["discarded"]):
        places.update((seat, card) for card in cards)
    return places

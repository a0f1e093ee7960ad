"""Real TableUpdates through the gRPC stack match the JSON Schemas of the games' packages.

The pure test (tests/games/test_schemas.py) checks the engines; this one checks
what a phone actually receives: ``view_json`` as GetView and Subscribe send it,
and every event of the stream, the table's own events (game_started) included.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
from collections.abc import Mapping

import pytest
from jsonschema import Draft202012Validator

from shared.games.catalog import CATALOGUE
from shared.sdk.client import Endpoints, StammtischClient, Update
from tests.support.schemas import load_schema
from tests.support.stack import close_all, play_one, seated_players

pytestmark = pytest.mark.integration

#: Every installed game, from the catalogue.
GAMES = sorted(CATALOGUE)
MOVES = 12


def _validator(schema: dict[str, object]) -> Draft202012Validator:
    return Draft202012Validator(schema)


def _errors(validator: Draft202012Validator, instance: object) -> list[str]:
    return [f"/{'/'.join(map(str, e.absolute_path))}: {e.message[:200]}"
            for e in validator.iter_errors(instance)]


async def _collect(client: StammtischClient, table_id: str, into: list[Update]) -> None:
    async for update in client.updates(table_id):
        into.append(update)


@pytest.mark.parametrize("game", GAMES)
async def test_view_json_and_events_of_a_short_real_game_match_the_schemas(
        stack: Mapping[str, str], game: str) -> None:
    seats = min(max(3, CATALOGUE[game].min_seats), CATALOGUE[game].max_seats)
    clients, table_id = await seated_players(Endpoints.of(stack), game, seats)
    # The schemas a client learns at run time (ListGames) are the ones its updates match.
    schemas = next(info.schemas_json for info in await clients[0].games() if info.name == game)
    assert {kind: json.loads(text) for kind, text in schemas.items()} == {
        kind: load_schema(f"{game}.{kind}") for kind in schemas}
    streamed: list[Update] = []
    watcher = asyncio.create_task(_collect(clients[1], table_id, streamed))
    views: list[Update] = []
    try:
        rng = random.Random(7)
        moves = 0
        while moves < MOVES and not (views and views[-1].view.get("over")):
            # A short game (a few cards a hand) may end before MOVES moves.
            await play_one(clients, table_id, game, rng)
            moves += 1
            views += await asyncio.gather(*(client.view(table_id) for client in clients))
        await asyncio.sleep(0.5)
    finally:
        watcher.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watcher
        await close_all(clients)
    view_schema, game_events = (_validator(json.loads(schemas[kind])) for kind in ("view", "events"))
    table_events = _validator(load_schema("table.events"))
    assert len(streamed) >= moves and views
    for update in [*views, *streamed]:
        assert update.view["game"] == game
        assert not _errors(view_schema, update.view), (update.seq, _errors(view_schema, update.view))
    kinds = set()
    for update in streamed:
        for event in update.events:
            kinds.add(event["type"])
            assert game_events.is_valid(event) or table_events.is_valid(event), (
                event, _errors(game_events, event))
    assert "game_started" in kinds and kinds - {"game_started"}

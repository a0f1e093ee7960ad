"""Tournament news for players' inboxes (issue 27 consumes them): plain NATS messages, one per
player, subject ``<prefix>.tournament.news.<player_id>``, JSON::

    {"kind": "starting_soon" | "seated", "tournament_id": "...", "name": "...", "game": "...",
     "player_id": "...", "page": "/tournaments/<id>", "at": <unix seconds>,
     # starting_soon: "starts_at": <unix seconds>
     # seated: "round": 1, "table": 1, "table_id": "...", "seat": 0}

``starting_soon`` goes out once, :data:`SOON_SECONDS` before ``start_at`` (its history entry
``starting_soon`` makes it once per tournament); ``seated`` once per player when a round is
announced. Delivery is at most once (core NATS): an inbox that was down misses them, and the
tournament's own history (WatchTournament) stays the record.
"""

from __future__ import annotations

import json
import time
from typing import Any

from services.tournament.model import Tournament
from shared.infra.runtime import Runtime

#: How long before its start a tournament's players hear it starts soon.
SOON_SECONDS = 300.0


def subject(runtime: Runtime, player_id: str) -> str:
    """The subject of one player's tournament news."""
    return runtime.subject("tournament", "news", player_id)


async def _send(runtime: Runtime, tournament: Tournament, player_id: str, kind: str, **extra: Any) -> None:
    news = {"kind": kind, "tournament_id": tournament.tournament_id, "name": tournament.settings.name,
            "game": tournament.settings.game, "player_id": player_id,
            "page": f"/tournaments/{tournament.tournament_id}", "at": time.time(), **extra}
    await runtime.nats.publish(subject(runtime, player_id), json.dumps(news).encode())


async def starting_soon(runtime: Runtime, tournament: Tournament) -> None:
    """Every registered person: the tournament starts at ``start_at``."""
    for player in tournament.players:
        if not player.bot and player.last_round is None:
            await _send(runtime, tournament, player.player_id, "starting_soon",
                        starts_at=tournament.settings.start_at)


async def seated(runtime: Runtime, tournament: Tournament, number: int) -> None:
    """Every person seated in round ``number``: their table and seat."""
    for index, seats in enumerate(tournament.rounds[number - 1].tables):
        for seat, player in enumerate(seats):
            if player:
                await _send(runtime, tournament, player, "seated", round=number, table=index + 1,
                            table_id=tournament.table_id(number, index), seat=seat)

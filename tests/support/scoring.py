"""Helpers shared by the scoring tests (not a test module): publish results, query the boards."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, TypeAlias

import grpc
from prometheus_client import REGISTRY

from shared.api.stammtisch.v1 import scoring_pb2, scoring_pb2_grpc
from shared.config import Settings
from shared.infra.runtime import open_runtime
from shared.rpc.auth import TokenSigner
from shared.tables.announce import Announcer
from shared.tables.records import CommitRecord, TableMeta
from shared.tables.store import TableStore

WILLI, STICH = "willi", "willi-stich"
Metadata: TypeAlias = tuple[tuple[str, str], ...]
Stub: TypeAlias = scoring_pb2_grpc.ScoringServiceStub


def finished(table_id: str, game: str, players: list[str], scores: list[int], *, seq: int = 40,
             game_no: int = 1, bots: dict[str, str] | None = None) -> CommitRecord:
    """The commit that ends a game: its last round_over, then game_over (result index 1)."""
    best = max(score for seat, score in enumerate(scores) if seat < len(players))
    winners = [seat for seat in range(len(players)) if scores[seat] == best]
    meta = TableMeta(table_id, game, players, bots or {}, game_no=game_no)
    events: list[dict[str, Any]] = [{"type": "round_over", "round": 8, "scores": scores},
                                    {"type": "game_over", "winners": winners, "scores": scores}]
    return CommitRecord(seq, time.time(), meta, {}, events, {})


@asynccontextmanager
async def publisher(settings: Settings) -> AsyncIterator[Announcer]:
    """An Announcer on its own connections, publishing exactly as the game services do."""
    async with open_runtime(settings, name="test-publisher") as runtime:
        yield Announcer(runtime, TableStore(runtime, lambda *_: {}))


def player(name: str) -> str:
    """A player id of the server's shape, made from a short name (in the names' order)."""
    return name.encode().hex().ljust(32, "0")


def auth(settings: Settings, name: str = "tester") -> Metadata:
    """Call metadata with a valid token for the player made from ``name``."""
    token, _ = TokenSigner(settings.token_secret, 3600).issue(player(name), name)
    return (("authorization", f"Bearer {token}"),)


@asynccontextmanager
async def scoring(address: str) -> AsyncIterator[Stub]:
    """A stub on a channel to the scoring service."""
    async with grpc.aio.insecure_channel(address) as channel:
        yield scoring_pb2_grpc.ScoringServiceStub(channel)


def consumed(outcome: str) -> float:
    """How many results this process's scoring consumers handled with ``outcome`` so far."""
    return REGISTRY.get_sample_value("stammtisch_results_consumed_total", {"outcome": outcome}) or 0.0


async def table_results(stub: Stub, metadata: Metadata, table_id: str) -> list[scoring_pb2.GameResult]:
    """A table's finished games."""
    reply = await stub.GetTableResults(scoring_pb2.GetTableResultsRequest(table_id=table_id),
                                       metadata=metadata)
    return list(reply.results)


async def board(stub: Stub, metadata: Metadata, game: str = WILLI,
                limit: int = 100) -> list[scoring_pb2.LeaderboardEntry]:
    """A game's leaderboard."""
    reply = await stub.GetLeaderboard(scoring_pb2.GetLeaderboardRequest(game=game, limit=limit),
                                      metadata=metadata)
    return list(reply.entries)

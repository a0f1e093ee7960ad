"""After the run: hold what the clients were told against Redis and scoring.

The table logs are read the way the services read them (:class:`TableLog`,
the stored answer of each action id), and scoring is asked through its gRPC
API, as a client would, once every process is back.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import json
import time
from dataclasses import dataclass, field
from typing import Any

from services.tools.chaos.players import Acknowledged, Ledger, persist, seat_actions
from shared.api.stammtisch.v1 import lobby_pb2, scoring_pb2
from shared.config import Settings
from shared.infra.runtime import open_runtime
from shared.rpc.actions import action_of, action_proto
from shared.sdk.client import Endpoints, StammtischClient
from shared.tables.log import TableLog
from shared.tables.records import CommitRecord

#: How long scoring may take to catch up with the last results after the run.
SCORING_WAIT_SECONDS = 60.0


@dataclass
class Findings:
    """What the checks found; every list holds one line per problem."""

    lost: list[str] = field(default_factory=list)
    duplicated: list[str] = field(default_factory=list)
    log_holes: list[str] = field(default_factory=list)
    scoring: list[str] = field(default_factory=list)
    lobby: list[str] = field(default_factory=list)


def _same_action(logged: dict[str, Any] | None, sent: dict[str, Any]) -> bool:
    """Equal as the server stores them (the SDK's proto and back, as JSON)."""
    stored = json.loads(json.dumps(action_of(action_proto(sent))))
    return logged == stored


def _client_actions(log: list[CommitRecord]) -> dict[int, CommitRecord]:
    """Commits of a seat's own action (not the server's: game start, time up, a turn clock)."""
    return {record.seq: record for record in log if record.actor is not None
            and not any(event.get("type") == "timed_out" for event in record.events)}


async def check_logs(settings: Settings, ledger: Ledger, findings: Findings) -> None:
    """Every acknowledged action is in its table's log exactly once, where its answer says."""
    acks = seat_actions(ledger)
    async with open_runtime(settings, name="stammtisch-chaos-check") as runtime:
        store = TableLog(runtime)
        for table_id in ledger.tables:
            log = await store.log_after(table_id, 0, limit=1_000_000)
            if [r.seq for r in log] != list(range(1, len(log) + 1)):
                findings.log_holes.append(f"{table_id}: log seqs are not 1..{len(log)}")
            by_seq = {record.seq: record for record in log}
            claimed: set[int] = set()
            for ack in acks.get(table_id, []):
                problem = await _check_one(store, ack, by_seq, claimed)
                if problem:
                    findings.lost.append(f"{table_id} seat {ack.seat} action {ack.action_id}: {problem}")
                claimed.add(ack.seq)
            for _table, player, action_id in (a for a in ledger.abandoned if a[0] == table_id):
                answer = await store.answer(table_id, f"{player}:{action_id}")
                if answer and "seq" in answer:
                    claimed.add(int(answer["seq"]))  # committed, its answer never reached the client
            for seq, record in sorted(_client_actions(log).items()):
                if seq not in claimed:
                    findings.duplicated.append(
                        f"{table_id} seq {seq}: seat {record.actor} {record.action} was committed "
                        "for no action id a client sent (an action applied twice?)")


async def _check_one(store: TableLog, ack: Acknowledged, by_seq: dict[int, CommitRecord],
                     claimed: set[int]) -> str:
    answer = await store.answer(ack.table_id, f"{ack.player_id}:{ack.action_id}")
    if answer != {"seq": ack.seq}:
        return f"the stored answer is {answer}, the client was told seq {ack.seq}"
    record = by_seq.get(ack.seq)
    if record is None:
        return f"seq {ack.seq} is not in the log"
    if record.actor != ack.seat or not _same_action(record.action, ack.action):
        return f"seq {ack.seq} holds seat {record.actor} {record.action}, not {ack.action}"
    if ack.seq in claimed:
        return f"seq {ack.seq} was also the answer to another action"
    return ""


async def check_scoring(endpoints: Endpoints, ledger: Ledger, findings: Findings,
                        wait: float = SCORING_WAIT_SECONDS) -> None:
    """Scoring holds every finished game once, and counted it once for each of its players."""
    finished = [run for run in ledger.tables.values() if run.finished]
    async with StammtischClient(endpoints) as auditor:
        await persist(ledger, "login", lambda: auditor.login("chaos-auditor"))
        deadline = time.monotonic() + wait
        missing = list(finished)
        while missing and time.monotonic() < deadline:
            counts = await asyncio.gather(*(_results(ledger, auditor, run.table_id) for run in missing))
            missing = [run for run, count in zip(missing, counts, strict=True) if count == 0]
            if missing:
                await asyncio.sleep(1.0)
        for run in finished:
            count = await _results(ledger, auditor, run.table_id)
            if count != 1:
                findings.scoring.append(f"{run.table_id} ({run.game}): {count} results, expected 1")
                continue
            for player in run.players:
                games = await _games_played(ledger, auditor, player, run.game)
                if games != 1:
                    findings.scoring.append(f"{run.table_id}: player {player} has {games} "
                                            f"{run.game} games counted, expected 1")


async def check_lobby(endpoints: Endpoints, ledger: Ledger, findings: Findings,
                      wait: float = SCORING_WAIT_SECONDS) -> None:
    """The lobby learnt of every finished game: the table is between games, not playing forever."""
    finished = [run for run in ledger.tables.values() if run.finished]
    async with StammtischClient(endpoints) as auditor:
        await persist(ledger, "login", lambda: auditor.login("chaos-auditor"))
        deadline = time.monotonic() + wait
        waiting = finished
        while True:
            tables = await asyncio.gather(*(persist(ledger, "lobby", functools.partial(
                auditor.get_table, run.table_id)) for run in waiting))
            waiting = [run for run, table in zip(waiting, tables, strict=True)
                       if table.status != lobby_pb2.TABLE_STATUS_BETWEEN_GAMES or table.games_played != 1]
            if not waiting or time.monotonic() > deadline:
                break
            await asyncio.sleep(1.0)
        findings.lobby += [f"{run.table_id} ({run.game}): the lobby still does not know the game ended"
                           for run in waiting]


async def _results(ledger: Ledger, client: StammtischClient, table_id: str) -> int:
    reply = await persist(ledger, "scoring", lambda: client.scoring.GetTableResults(
        scoring_pb2.GetTableResultsRequest(table_id=table_id), metadata=client.auth))
    return len(reply.results)


async def _games_played(ledger: Ledger, client: StammtischClient, player_id: str, game: str) -> int:
    reply = await persist(ledger, "scoring", lambda: client.scoring.GetPlayerStats(
        scoring_pb2.GetPlayerStatsRequest(player_id=player_id), metadata=client.auth))
    return sum(entry.games for entry in reply.per_game if entry.game == game)


def check_settings(redis_url: str, nats_url: str, key_prefix: str) -> Settings:
    """Settings that read the run's data (no servers of its own)."""
    return dataclasses.replace(Settings(), redis_url=redis_url, nats_url=nats_url, key_prefix=key_prefix)

"""The archiver: every finished game goes from the live Redis log into the archive stream.

A durable JetStream consumer of ``<prefix>.results.*.game`` shared by all
lobby replicas: each ``game_over`` result is handled by one of them, and
acknowledged only once the game is archived and indexed. A replica that dies
mid-way leaves the result unacknowledged, so another one redoes it after the
ack wait; archiving is idempotent (store.py), so a redelivery or a result
relayed twice stores nothing twice. The live keys live 7 days after a
table's last commit (shared/tables/store.py), so the archiver has that long
to catch up after an outage.
"""

from __future__ import annotations

import json

from nats.aio.msg import Msg

from services.history.store import ArchiveStore
from shared.archive.document import ArchivedCommit, GameArchive
from shared.errors import NotFound
from shared.infra.result_group import GameResultGroup
from shared.infra.runtime import Runtime
from shared.obs.logs import get_logger
from shared.tables.log import TableLog
from shared.tables.records import CommitRecord

log = get_logger("history.consumer")

DURABLE = "history-archive"
RETRY_SECONDS = 2.0
ACK_WAIT_SECONDS = 30.0
#: Log entries read per round trip while walking back to the game's start.
BATCH = 1000


async def game_records(store: TableLog, table_id: str, game_no: int, last_seq: int) -> list[CommitRecord]:
    """The commits of one game, oldest first: back from its last one to its ``game_started``
    (a game's start is always a snapshot of the log), then forward, each whole."""
    high = last_seq
    while True:
        entries = await store.log_back(table_id, high, BATCH)
        for seq, snapshot in entries:
            if (snapshot is not None and snapshot.meta.game_no == game_no and snapshot.events
                    and snapshot.events[0].get("type") == "game_started"):
                records = await store.log_after(table_id, seq - 1, limit=last_seq - seq + 1,
                                                states_only=True)
                return [record for record in records if record.meta.game_no == game_no]
        if len(entries) < BATCH:
            raise LookupError(f"the log of table {table_id!r} no longer holds the start of game {game_no}")
        high = entries[-1][0] - 1


def archive_of(records: list[CommitRecord]) -> GameArchive:
    """One finished game's commits as its archive document."""
    first = records[0]
    meta = first.meta
    started = first.events[0]
    seats = [{"seat": seat["seat"], "player_id": seat.get("player_id") or "", "name": seat.get("name") or "",
              "bot": seat.get("bot")} for seat in started.get("seats", [])]
    return GameArchive(
        table_id=meta.table_id, game=meta.game, game_no=meta.game_no, seat_count=len(meta.players),
        seats=seats, options=meta.options, seed=meta.seed, salt=meta.salt,
        commitment=str(started.get("commitment", "")),
        commits=[ArchivedCommit(r.seq, r.at, r.actor, r.action, r.events, r.state, dict(r.meta.bots))
                 for r in records])


class Archiver(GameResultGroup):
    """Archives each finished game from the results stream, shared by the lobby replicas."""

    def __init__(self, runtime: Runtime, archive: ArchiveStore) -> None:
        super().__init__(runtime, DURABLE, ACK_WAIT_SECONDS, self._on_message)
        self.archive = archive
        self.tables = TableLog(runtime)

    async def start(self) -> None:
        """Declare the archive stream, then join the replicas' durable consumer."""
        await self.archive.declare()
        await super().start()

    async def archive_game(self, table_id: str, game_no: int, seq: int) -> bool:
        """Archive the game that ended with commit ``seq``; False when it already was."""
        records = await game_records(self.tables, table_id, game_no, seq)
        fresh = await self.archive.put(archive_of(records))
        log.info("game_archived" if fresh else "game_already_archived", table_id=table_id,
                 game_no=game_no, commits=len(records))
        return fresh

    async def _on_message(self, msg: Msg) -> None:
        try:
            payload = json.loads(msg.data)
            table_id, game_no, seq = str(payload["table_id"]), int(payload["game_no"]), int(payload["seq"])
        except (ValueError, KeyError, TypeError):
            log.error("bad_result_message", subject=msg.subject)
            await msg.term()
            return
        try:
            await self.archive_game(table_id, game_no, seq)
        except (LookupError, NotFound) as err:
            log.error("game_not_archivable", table_id=table_id, game_no=game_no, error=str(err))
            await msg.term()
            return
        except Exception:
            log.exception("archiving_failed", table_id=table_id, game_no=game_no)
            await msg.nak(delay=RETRY_SECONDS)
            return
        await msg.ack()

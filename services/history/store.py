"""Where finished games are kept: the archive stream, and each player's history in Redis.

The archive is a JetStream stream with file storage (``<PREFIX>_ARCHIVE``, no
age limit), one message per game on ``<prefix>.archive.<table_id>.<game_no>``.
A game is written once: the publish expects the subject to be empty
(``Nats-Expected-Last-Subject-Sequence: 0``), so a second archiving of the
same game, however late, is refused instead of stored twice; the msg id
drops a re-sent publish too. Only a pseudonymisation rewrites a game (it
expects the sequence it read; the stream keeps one message per subject).

Each player's history is an index in the AOF Redis, without TTL::

    <prefix>:history:<player_id>        zset (score 0)  "<ended ms, 13 digits>|<table_id>|<game_no>"
    <prefix>:history:{<table_id>}:games hash            game_no -> summary JSON (messages.summary_of)

The index is derived from the archive, so it can be rebuilt from the stream.
"""

from __future__ import annotations

import json
from typing import Any

from nats.js.api import StorageType, StreamConfig
from nats.js.errors import APIError, BadRequestError, NotFoundError

from shared.archive.document import GameArchive
from shared.archive.messages import summary_of
from shared.config import Settings
from shared.infra.runtime import Runtime

#: JetStream's err_code for a publish whose expected last sequence does not hold.
WRONG_LAST_SEQUENCE = 10071


def archive_stream(settings: Settings) -> StreamConfig:
    """Finished games, kept until deleted (file storage; replicated in a NATS cluster)."""
    prefix = settings.key_prefix
    return StreamConfig(name=f"{prefix.upper()}_ARCHIVE", subjects=[f"{prefix}.archive.>"],
                        duplicate_window=120.0, max_msgs_per_subject=1,
                        storage=StorageType.FILE, num_replicas=settings.stream_replicas)




def entry(archive: GameArchive) -> str:
    """A game's member in a player's history: sorts by its end, newest last."""
    return f"{int(archive.ended_at * 1000):013d}|{archive.table_id}|{archive.game_no}"


class ArchiveStore:
    """Reads and writes the archive and the history index of one deployment."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.redis = runtime.redis
        self.stream = str(archive_stream(runtime.settings).name)

    async def declare(self) -> None:
        """Create (or update) the archive stream."""
        config = archive_stream(self.runtime.settings)
        try:
            await self.runtime.js.add_stream(config)
        except BadRequestError:
            await self.runtime.js.update_stream(config)

    def subject(self, table_id: str, game_no: int) -> str:
        """Where one game is archived."""
        return self.runtime.subject("archive", table_id, str(game_no))

    def history_key(self, player_id: str) -> str:
        """A player's finished games."""
        return self.runtime.key("history", player_id)

    def games_key(self, table_id: str) -> str:
        """Summaries of a table's archived games."""
        return self.runtime.key("history", "{" + table_id + "}", "games")

    async def put(self, archive: GameArchive) -> bool:
        """Archive a finished game once, then index it; False when it was already archived."""
        try:
            await self.runtime.js.publish(
                self.subject(archive.table_id, archive.game_no), archive.encode(), stream=self.stream,
                headers={"Nats-Msg-Id": f"archive:{archive.table_id}:{archive.game_no}",
                         "Nats-Expected-Last-Subject-Sequence": "0"})
            fresh = True
        except APIError as err:
            if err.err_code != WRONG_LAST_SEQUENCE:
                raise
            fresh = False
        # Indexed after the archive (and again after a redelivery): the index never names a
        # game the archive lacks, and a crash in between is healed by the next delivery.
        await self.index(archive)
        return fresh

    async def index(self, archive: GameArchive) -> None:
        """Add the game to the history of everyone who sat there (several Redis Cluster slots,
        so no transaction: every write is idempotent, and a redelivery redoes them all)."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hset(self.games_key(archive.table_id), str(archive.game_no),
                      json.dumps(summary_of(archive)))
            for player_id in archive.player_ids():
                pipe.zadd(self.history_key(player_id), {entry(archive): 0})
            await pipe.execute()

    async def get(self, table_id: str, game_no: int) -> tuple[GameArchive, int] | None:
        """An archived game and its stream sequence; None when it is not archived."""
        try:
            message = await self.runtime.js.get_last_msg(self.stream, self.subject(table_id, game_no))
        except NotFoundError:
            return None
        assert message.data is not None and message.seq is not None
        return GameArchive.decode(message.data), message.seq

    async def rewrite(self, archive: GameArchive, seq: int) -> None:
        """Replace an archived game (a pseudonymisation); refused if it changed since ``seq``."""
        await self.runtime.js.publish(
            self.subject(archive.table_id, archive.game_no), archive.encode(), stream=self.stream,
            headers={"Nats-Expected-Last-Subject-Sequence": str(seq)})
        await self.redis.hset(self.games_key(archive.table_id), str(archive.game_no),
                              json.dumps(summary_of(archive)))

    async def newest_game(self, table_id: str) -> int | None:
        """The highest archived game number of a table."""
        numbers = [int(raw) for raw in await self.redis.hkeys(self.games_key(table_id))]
        return max(numbers) if numbers else None

    async def page(self, player_id: str, size: int, before: str) -> list[str]:
        """Up to ``size`` history entries, newest first, older than ``before`` ("" = newest)."""
        high = f"({before}" if before else "+"
        raw = await self.redis.zrevrangebylex(self.history_key(player_id), high, "-", 0, size)
        return [item.decode() for item in raw]

    async def summaries(self, entries: list[str]) -> list[dict[str, Any]]:
        """The summary of each history entry, in order."""
        async with self.redis.pipeline(transaction=False) as pipe:
            for item in entries:
                _ended, table_id, game_no = item.split("|")
                pipe.hget(self.games_key(table_id), game_no)
            found = await pipe.execute()
        return [json.loads(raw) for raw in found if raw is not None]

    async def all_entries(self, player_id: str) -> list[str]:
        """A player's whole history, newest first (export, deletion)."""
        return [item.decode() for item in await self.redis.zrevrange(self.history_key(player_id), 0, -1)]

    async def forget(self, player_id: str) -> None:
        """Drop a player's history index (the games stay, pseudonymised)."""
        await self.redis.delete(self.history_key(player_id))

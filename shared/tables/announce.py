"""After a commit: live news on NATS, results durably on JetStream (with an outbox).

Live news is best effort (subscribers heal gaps from the Redis log); this
process's own subscribers get it directly (shared/infra/local_fanout.py). Results
must not be lost: the commit script put "table|seq" into the outbox; it leaves
the outbox only once JetStream acknowledged the publish, and a relay retries
whatever stayed. ``Nats-Msg-Id`` makes a retried publish a no-op.

So an announcement that fails (NATS away) is logged and forgotten: the commit
stands, and whoever made it answers from it.
"""

from __future__ import annotations

import json
import time
from typing import Any

from shared.infra.runtime import Runtime
from shared.infra.tasks import poll_forever
from shared.obs.logs import get_logger
from shared.obs.metrics import RESULTS_PUBLISHED
from shared.tables.records import CommitRecord
from shared.tables.store import RESULT_EVENTS, TableStore

log = get_logger("announce")

#: Outbox entries older than this are retried by the relay.
RELAY_AFTER_SECONDS = 3.0
#: How long a commit's own results publish waits for JetStream (the relay covers a slow one).
PUBLISH_TIMEOUT = 1.0


def live_subject(runtime: Runtime, table_id: str) -> str:
    """Where every commit of a table is announced."""
    return runtime.subject("live", table_id)


def result_messages(record: CommitRecord) -> list[tuple[str, str, dict[str, Any]]]:
    """(kind, msg id, payload) for each result event of a commit."""
    meta = record.meta
    messages = []
    for index, event in enumerate(record.events):
        if event.get("type") not in RESULT_EVENTS:
            continue
        kind = "game" if event["type"] == "game_over" else "round"
        payload = {"table_id": meta.table_id, "seq": record.seq, "game": meta.game,
                   "game_no": meta.game_no, "players": meta.players, "bots": meta.bots,
                   "at": record.at, "event": event}
        messages.append((kind, f"{meta.table_id}:{record.seq}:{index}", payload))
    return messages


class Announcer:
    """Publishes the commits of one service; the relay runs once per process (Runtime.claim)."""

    def __init__(self, runtime: Runtime, store: TableStore) -> None:
        self.runtime = runtime
        self.store = store

    async def announce(self, record: CommitRecord) -> None:
        """Live news for subscribers here and everywhere else, then the results (if any); never raises:
        the commit and its outbox are in Redis already, so subscribers read a gap from the log and the
        relay publishes the results once JetStream answers."""
        # this process's own streams, at once
        self.runtime.local_commits.deliver(record.meta.table_id, record)
        try:
            await self.runtime.live.publish(live_subject(self.runtime, record.meta.table_id),
                                            record.encode())
            if any(e.get("type") in RESULT_EVENTS for e in record.events):
                await self.publish_results(record, PUBLISH_TIMEOUT)
        except Exception as exc:  # noqa: BLE001 - the commit stands; the log and the outbox heal
            log.warning("announce_failed", table_id=record.meta.table_id, seq=record.seq,
                        error=repr(exc), healing="subscribers read the log; the relay re-publishes")

    async def publish_results(self, record: CommitRecord, timeout: float | None = None) -> None:
        """Publish every result of the commit and clear its outbox entry once acknowledged."""
        for kind, msg_id, payload in result_messages(record):
            subject = self.runtime.subject("results", record.meta.game, kind)
            await self.runtime.js.publish(subject, json.dumps(payload).encode(), timeout=timeout,
                                          headers={"Nats-Msg-Id": msg_id})
            RESULTS_PUBLISHED.labels(kind).inc()
        await self.runtime.redis.zrem(self.store.outbox_key(self.store.shard_of(record.meta.table_id)),
                                      f"{record.meta.table_id}|{record.seq}")

    async def relay_forever(self, interval: float = 1.0) -> None:
        """Re-publish results whose publisher died before JetStream acknowledged them."""
        await poll_forever(self.relay_once, interval, log, "relay_failed")

    async def relay_once(self) -> int:
        """One pass over stale outbox entries of every shard; returns how many were re-published."""
        cutoff_ms = int((time.time() - RELAY_AFTER_SECONDS) * 1000)
        async with self.runtime.redis.pipeline(transaction=False) as pipe:
            for shard in self.runtime.shards.all():
                pipe.zrangebyscore(self.store.outbox_key(shard), "-inf", cutoff_ms, start=0, num=100)
            entries = [entry for shard_entries in await pipe.execute() for entry in shard_entries]
        for entry in entries:
            table_id, _, seq = entry.decode().rpartition("|")
            record = await self.store.record(table_id, int(seq))
            await self.publish_results(record)
            log.info("result_relayed", table_id=table_id, seq=int(seq))
        return len(entries)

"""Push to closed phones: device tokens, preferences, and a durable outbox in Redis.

A job is written with its notification (one transaction, so a crash loses neither or both) and
delivered by whichever replica claims it: the claim moves it a lease into the future, so a
replica killed mid-delivery leaves it to another after the lease. Each device gets one HTTP POST
with an idempotency key (notification and device), so a job delivered twice after a crash is
shown once by the gateway. A newer job with the same collapse key (one table's "your turn")
replaces a pending one. Failures retry with exponential backoff up to MAX_ATTEMPTS.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import orjson
from redis.asyncio.client import Pipeline

from services.clubs.keys import Keys
from shared.infra.tasks import not_cancelled
from shared.obs.logs import get_logger
from shared.obs.metrics import OUTBOX_DEPTH, PUSH_FAILED, PUSH_LATENCY, PUSH_SENT

log = get_logger("clubs.push")

MAX_ATTEMPTS = 8
#: A claimed job comes back to the outbox after this long unless delivered or rescheduled.
LEASE_SECONDS = 30.0
BACKOFF_BASE = 1.0
BACKOFF_MAX = 300.0
CLAIM_BATCH = 50
HTTP_TIMEOUT = 5.0
#: Delivery records kept per player.
DELIVERED_KEPT = 100
MAX_DEVICES = 10

_CLAIM = """
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[3]))
for _, id in ipairs(due) do redis.call('ZADD', KEYS[1], ARGV[2], id) end
if #due == 0 then return {} end
return redis.call('HMGET', KEYS[2], unpack(due))
"""


@dataclass
class PushJob:
    """One notification to push to every device of a player."""

    job_id: str
    player_id: str
    notification_id: str
    kind: str
    text: str
    collapse_key: str
    data: dict[str, str]
    created_at: float
    due: float
    attempts: int = 0
    #: Devices (by token hash) already delivered to: a retry skips them.
    done: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Preferences:
    """What a player lets reach the phone: muted kinds (short names), quiet hours in a zone."""

    muted: tuple[str, ...] = ()
    quiet_start: int = 0
    quiet_end: int = 0
    time_zone: str = ""

    def quiet_until(self, now: float) -> float:
        """When the quiet hours around ``now`` end; ``now`` outside them."""
        if self.quiet_start == self.quiet_end:
            return now
        local = datetime.fromtimestamp(now, ZoneInfo(self.time_zone or "UTC"))
        minute = local.hour * 60 + local.minute
        start, end = self.quiet_start, self.quiet_end
        inside = start <= minute < end if start < end else (minute >= start or minute < end)
        if not inside:
            return now
        wait = (end - minute) % (24 * 60)
        return now + wait * 60 - local.second


def token_hash(token: str) -> str:
    """A device's name in records and idempotency keys (never the token itself)."""
    return hashlib.sha256(token.encode()).hexdigest()[:16]


class Devices:
    """A player's push tokens and preferences."""

    def __init__(self, keys: Keys) -> None:
        self.keys = keys
        self.redis = keys.runtime.redis

    async def register(self, player_id: str, platform: str, token: str, app_id: str) -> None:
        """Keep the token (the newest MAX_DEVICES)."""
        key = self.keys.player(player_id, "devices")
        doc = orjson.dumps({"platform": platform, "token": token, "app_id": app_id, "at": time.time()})
        await self.redis.hset(key, token_hash(token), doc)
        devices = await self.all(player_id)
        for old in sorted(devices, key=lambda d: d["at"])[:-MAX_DEVICES]:
            await self.redis.hdel(key, token_hash(old["token"]))

    async def unregister(self, player_id: str, token: str) -> None:
        """Forget a token (idempotent)."""
        await self.redis.hdel(self.keys.player(player_id, "devices"), token_hash(token))

    async def all(self, player_id: str) -> list[dict[str, Any]]:
        """Every device of the player."""
        return [orjson.loads(doc) for doc in await self.redis.hvals(self.keys.player(player_id, "devices"))]

    async def preferences(self, player_id: str) -> Preferences:
        """The player's preferences (defaults: everything, no quiet hours)."""
        doc = await self.redis.get(self.keys.player(player_id, "preferences"))
        if doc is None:
            return Preferences()
        raw = orjson.loads(doc)
        return Preferences(tuple(raw["muted"]), raw["quiet_start"], raw["quiet_end"], raw["time_zone"])

    async def set_preferences(self, player_id: str, prefs: Preferences) -> None:
        """Replace the player's preferences."""
        await self.redis.set(self.keys.player(player_id, "preferences"), orjson.dumps(asdict(prefs)))

    async def forget(self, player_id: str) -> None:
        """Delete every token, preference and delivery record of a player."""
        await self.redis.delete(*(self.keys.player(player_id, name)
                                  for name in ("devices", "preferences", "delivered", "collapse")))


class Gateway:
    """The operator's push gateway: one JSON POST per device (shape in services/clubs/README.md)."""

    def __init__(self, url: str) -> None:
        self.url = url

    async def post(self, body: dict[str, Any], idempotency_key: str) -> int:
        """The HTTP status of one delivery; 0 when the gateway did not answer."""
        return await asyncio.to_thread(self._post, orjson.dumps(body), idempotency_key)

    def _post(self, body: bytes, idempotency_key: str) -> int:
        request = urllib.request.Request(self.url, data=body, method="POST", headers={
            "Content-Type": "application/json", "Idempotency-Key": idempotency_key})
        try:
            with urllib.request.urlopen(request, timeout=HTTP_TIMEOUT) as reply:
                return int(reply.status)
        except urllib.error.HTTPError as err:
            return int(err.code)
        except (urllib.error.URLError, OSError, TimeoutError):
            return 0


class Outbox:
    """Queues push jobs with their notification; delivers them from any replica."""

    def __init__(self, keys: Keys, devices: Devices, gateway_url: str,
                 lease_seconds: float = LEASE_SECONDS) -> None:
        self.keys = keys
        self.lease_seconds = lease_seconds
        self.redis = keys.runtime.redis
        self.devices = devices
        self.gateway = Gateway(gateway_url) if gateway_url else None
        self._claim = self.redis.register_script(_CLAIM)

    async def job_for(self, player_id: str, notification_id: str, kind: str, text: str,
                      collapse_key: str, data: dict[str, str], created_at: float) -> PushJob | None:
        """The push job of a new notification, or None: no gateway, no device, or muted."""
        if self.gateway is None or not await self.redis.exists(self.keys.player(player_id, "devices")):
            return None
        prefs = await self.devices.preferences(player_id)
        if kind in prefs.muted:
            return None
        return PushJob(uuid.uuid4().hex, player_id, notification_id, kind, text, collapse_key, data,
                       created_at, prefs.quiet_until(created_at))

    def queue(self, pipe: Pipeline, job: PushJob) -> None:
        """Add the job to a transaction (on the player's shard): it replaces a pending job of the
        same collapse key (an older job already claimed is delivered, and the gateway collapses)."""
        shard = self.keys.shard_of(job.player_id)
        collapse = self.keys.player(job.player_id, "collapse")
        pipe.hset(self.keys.outbox_jobs(shard), job.job_id, orjson.dumps(asdict(job)))
        pipe.zadd(self.keys.outbox(shard), {job.job_id: job.due})
        pipe.hset(collapse, job.collapse_key, job.job_id)

    async def _replace_collapsed(self, job: PushJob) -> bool:
        """True when a newer job of the same collapse key has been queued (this one is dropped)."""
        newest = await self.redis.hget(self.keys.player(job.player_id, "collapse"), job.collapse_key)
        return newest is not None and newest.decode() != job.job_id

    async def depth(self) -> int:
        """Jobs waiting in every shard."""
        total = 0
        for shard in self.keys.runtime.shards.all():
            total += int(await self.redis.zcard(self.keys.outbox(shard)))
        return total

    async def deliver_forever(self, interval: float = 0.2) -> None:
        """Claim and deliver due jobs of every shard until cancelled."""
        while not_cancelled():
            try:
                delivered = await self.deliver_once()
                OUTBOX_DEPTH.set(await self.depth())
            except Exception:
                log.exception("outbox_round_failed")
                delivered = 0
            if not delivered:
                await asyncio.sleep(interval)

    async def deliver_once(self) -> int:
        """Deliver the jobs due now; how many were handled."""
        handled = 0
        for shard in self.keys.runtime.shards.all():
            jobs = await self.claim(shard)
            await asyncio.gather(*(self._deliver(shard, job) for job in jobs))
            handled += len(jobs)
        return handled

    async def claim(self, shard: int) -> list[PushJob]:
        """Take the due jobs of a shard for a lease: until it passes no other replica takes them
        (and a replica that dies holding them leaves them to the others after it)."""
        now = time.time()
        docs = await self._claim(keys=[self.keys.outbox(shard), self.keys.outbox_jobs(shard)],
                                 args=[now, now + self.lease_seconds, CLAIM_BATCH])
        return [PushJob(**orjson.loads(doc)) for doc in docs if doc is not None]

    async def _deliver(self, shard: int, job: PushJob) -> None:
        if self.gateway is None:
            return
        if await self._replace_collapsed(job):
            await self._finish(shard, job, "collapsed")
            return
        badge = sum(1 for raw in await self.redis.hvals(self.keys.player(job.player_id, "waiting"))
                    if orjson.loads(raw)["deadline"])
        failed = False
        for device in await self.devices.all(job.player_id):
            device_id = token_hash(device["token"])
            if device_id in job.done:
                continue
            body = {"platform": device["platform"], "token": device["token"], "app_id": device["app_id"],
                    "notification_id": job.notification_id, "kind": job.kind, "text": job.text,
                    "collapse_key": job.collapse_key, "badge": badge, "data": job.data,
                    "created_at": job.created_at}
            status = await self.gateway.post(body, f"{job.notification_id}:{device_id}")
            if 200 <= status < 300:
                job.done.append(device_id)
            elif status in (404, 410):
                await self.devices.unregister(job.player_id, device["token"])  # the token is gone
            elif status == 429 or status >= 500 or status == 0:
                failed = True
            else:
                PUSH_FAILED.labels(reason=f"http_{status}").inc()
        if not failed:
            PUSH_SENT.labels(kind=job.kind).inc()
            PUSH_LATENCY.observe(max(0.0, time.time() - job.due))
            await self._finish(shard, job, "delivered")
            return
        job.attempts += 1
        if job.attempts >= MAX_ATTEMPTS:
            PUSH_FAILED.labels(reason="gave_up").inc()
            await self._finish(shard, job, "failed")
            return
        job.due = time.time() + min(BACKOFF_MAX, BACKOFF_BASE * 2 ** (job.attempts - 1))
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hset(self.keys.outbox_jobs(shard), job.job_id, orjson.dumps(asdict(job)))
            pipe.zadd(self.keys.outbox(shard), {job.job_id: job.due})
            await pipe.execute()

    async def _finish(self, shard: int, job: PushJob, outcome: str) -> None:
        record = orjson.dumps({"notification_id": job.notification_id, "kind": job.kind,
                               "outcome": outcome, "devices": job.done, "at": time.time()})
        delivered = self.keys.player(job.player_id, "delivered")
        collapse = self.keys.player(job.player_id, "collapse")
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.zrem(self.keys.outbox(shard), job.job_id)
            pipe.hdel(self.keys.outbox_jobs(shard), job.job_id)
            pipe.lpush(delivered, record)
            pipe.ltrim(delivered, 0, DELIVERED_KEPT - 1)
            await pipe.execute()
        newest = await self.redis.hget(collapse, job.collapse_key)
        if newest is not None and newest.decode() == job.job_id:
            await self.redis.hdel(collapse, job.collapse_key)

    async def delivered(self, player_id: str) -> list[dict[str, Any]]:
        """The player's latest delivery records, newest first."""
        return [orjson.loads(doc) for doc in
                await self.redis.lrange(self.keys.player(player_id, "delivered"), 0, -1)]

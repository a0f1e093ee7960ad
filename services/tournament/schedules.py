"""Scheduled and recurring tournaments: each occurrence's tournament is created (registration
opens) ``open_seconds_before`` its start, with ``start_at`` the occurrence, so the director
starts it then.

Schedules live in Redis (hash ``tourney:schedules``, one JSON document each), so they survive
restarts. Whichever replica holds the scheduler's lease (:data:`LEASE`) makes the tournaments;
each occurrence's tournament id is derived from (schedule, start), so making it twice (a
replica that died between creating and recording it, two replicas racing) finds it made.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import secrets
import time
import uuid
from dataclasses import asdict, dataclass, field

from services.tournament import convert
from services.tournament.core.calendar import Recurrence, Rule, next_start, parse_time
from services.tournament.model import Tournament
from services.tournament.store import TournamentStore
from shared.api.stammtisch.v1 import tournament_pb2
from shared.infra.runtime import Runtime
from shared.infra.tasks import poll_forever
from shared.obs.logs import get_logger
from shared.rpc.errors import ServiceError, invalid
from shared.rpc.times import timestamp

log = get_logger("tournament.schedules")

#: The lease (a TournamentStore lease under this name) of the replica that makes tournaments.
LEASE = "schedules"
LEASE_SECONDS = 5.0
STEP_SECONDS = 1.0
#: An occurrence missed by more than this (every replica was down) is skipped, not started late.
MISSED_SECONDS = 600.0
#: Tournament ids a schedule remembers.
KEPT = 20
#: Occurrences are derived ids in this namespace (uuid5).
NAMESPACE = uuid.UUID("5d0f6b9e-2b1c-4d55-9a57-3f0e1d2c7a11")

_UPDATE = """
-- KEYS: schedules; ARGV: id, document. Only a schedule that still exists (not deleted meanwhile).
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1
"""


@dataclass
class Schedule:
    """One schedule: the tournament's settings (TournamentSettings, hex) and when it recurs."""

    schedule_id: str
    organizer_id: str
    settings: str
    recurrence: Recurrence
    time_of_day: str
    time_zone: str
    weekday: int = 0
    date: str = ""
    open_seconds_before: float = 0.0
    #: The next occurrence not yet made (None: a one-off that is done).
    next_start: float | None = None
    tournament_ids: list[str] = field(default_factory=list)

    def rule(self) -> Rule:
        """The timing as the calendar sees it."""
        return Rule(self.recurrence, parse_time(self.time_of_day), self.time_zone, self.weekday,
                    dt.date.fromisoformat(self.date) if self.date else None)

    def template(self) -> tournament_pb2.TournamentSettings:
        """The settings of every tournament it makes."""
        return tournament_pb2.TournamentSettings.FromString(bytes.fromhex(self.settings))


def occurrence_id(schedule_id: str, start: float) -> str:
    """The tournament id of one occurrence: the same on every replica."""
    return uuid.uuid5(NAMESPACE, f"{schedule_id}:{start:.3f}").hex


class ScheduleStore:
    """The schedules of one deployment."""

    def __init__(self, runtime: Runtime) -> None:
        self.redis = runtime.redis
        self.key = runtime.key("tourney", "schedules")
        self._update = self.redis.register_script(_UPDATE)

    async def add(self, schedule: Schedule) -> None:
        """Store a new schedule."""
        await self.redis.hset(self.key, schedule.schedule_id, _dump(schedule))

    async def all(self) -> list[Schedule]:
        """Every schedule, by next start (done one-offs last)."""
        found = [_load(raw) for raw in await self.redis.hvals(self.key)]
        return sorted(found, key=lambda s: (s.next_start is None, s.next_start or 0.0, s.schedule_id))

    async def get(self, schedule_id: str) -> Schedule | None:
        """One schedule, if it exists."""
        raw = await self.redis.hget(self.key, schedule_id)
        return _load(raw) if raw is not None else None

    async def update(self, schedule: Schedule) -> bool:
        """Write it back unless it was deleted meanwhile."""
        return bool(await self._update(keys=[self.key], args=[schedule.schedule_id, _dump(schedule)]))

    async def delete(self, schedule_id: str) -> None:
        """No further tournaments."""
        await self.redis.hdel(self.key, schedule_id)


def _dump(schedule: Schedule) -> str:
    return json.dumps(asdict(schedule), separators=(",", ":"))


def _load(raw: bytes) -> Schedule:
    data = json.loads(raw)
    data["recurrence"] = Recurrence(data["recurrence"])
    return Schedule(**data)


class Scheduler:
    """Makes each schedule's tournaments on time, while this replica holds the lease."""

    def __init__(self, runtime: Runtime, schedules: ScheduleStore, tournaments: TournamentStore,
                 holder: str | None = None) -> None:
        self.schedules = schedules
        self.tournaments = tournaments
        self.holder = holder or uuid.uuid4().hex
        self.default_turn = runtime.settings.turn_seconds

    async def run_forever(self) -> None:
        """Step until cancelled (through Redis outages)."""
        await poll_forever(self.run_once, STEP_SECONDS, log, "scheduler_step_failed")

    async def run_once(self, now: float | None = None) -> None:
        """Make every tournament that is due (only while holding the lease)."""
        if not await self.tournaments.hold(LEASE, self.holder, LEASE_SECONDS):
            return
        now = time.time() if now is None else now
        for schedule in await self.schedules.all():
            await self._step(schedule, now)

    async def stop(self) -> None:
        """Give the lease up, so another replica takes over at once."""
        await self.tournaments.release(LEASE, self.holder)

    async def _step(self, schedule: Schedule, now: float) -> None:
        start = schedule.next_start
        if start is None or now < start - schedule.open_seconds_before:
            return
        tournament_id = occurrence_id(schedule.schedule_id, start)
        if start >= now - MISSED_SECONDS:
            await self._make(schedule, tournament_id, start)
            schedule.tournament_ids = [*schedule.tournament_ids, tournament_id][-KEPT:]
        else:
            log.warning("occurrence_missed", schedule_id=schedule.schedule_id, start=start)
        schedule.next_start = next_start(schedule.rule(), start)
        await self.schedules.update(schedule)

    async def _make(self, schedule: Schedule, tournament_id: str, start: float) -> None:
        """The occurrence's tournament, unless it exists already."""
        if await self.tournaments.exists(tournament_id):
            return
        settings = dataclasses.replace(convert.settings_of(schedule.template(), self.default_turn),
                                       start_at=start)
        try:
            await self.tournaments.add(Tournament(tournament_id, schedule.organizer_id, settings, time.time(),
                                                  deal_secret=secrets.token_hex(16)))
        except ServiceError:  # made by another replica just now
            return
        log.info("scheduled_tournament_created", schedule_id=schedule.schedule_id,
                 tournament_id=tournament_id, start=start)


_RECURRENCES = {tournament_pb2.RECURRENCE_ONCE: Recurrence.ONCE,
                tournament_pb2.RECURRENCE_DAILY: Recurrence.DAILY,
                tournament_pb2.RECURRENCE_WEEKLY: Recurrence.WEEKLY}
_RECURRENCE_ENUMS = {recurrence: number for number, recurrence in _RECURRENCES.items()}
MAX_OPEN_BEFORE = 7 * 86_400


def schedule_of(request: tournament_pb2.TournamentSchedule, default_turn: float, schedule_id: str,
                organizer_id: str, now: float) -> Schedule:
    """A checked new schedule with its first occurrence after ``now``; INVALID_ARGUMENT for
    settings that cannot be played, a rule that is malformed, or a one-off in the past."""
    convert.settings_of(request.settings, default_turn)
    if request.recurrence not in _RECURRENCES:
        raise invalid("recurrence must be RECURRENCE_ONCE, RECURRENCE_DAILY or RECURRENCE_WEEKLY")
    convert.check_within("open_seconds_before", request.open_seconds_before, 0, MAX_OPEN_BEFORE)
    recurrence = _RECURRENCES[request.recurrence]
    template = tournament_pb2.TournamentSettings()
    template.CopyFrom(request.settings)
    template.ClearField("start_at")
    schedule = Schedule(schedule_id, organizer_id, template.SerializeToString().hex(), recurrence,
                        request.time_of_day, request.time_zone,
                        request.weekday if recurrence == Recurrence.WEEKLY else 0,
                        request.date if recurrence == Recurrence.ONCE else "",
                        float(request.open_seconds_before))
    try:
        rule = schedule.rule()
        rule.check()
    except ValueError as exc:
        raise invalid(str(exc)) from exc
    schedule.next_start = next_start(rule, now)
    if schedule.next_start is None:
        raise invalid("that date and time are past")
    return schedule


def schedule_proto(schedule: Schedule) -> tournament_pb2.TournamentSchedule:
    """A schedule as clients see it."""
    return tournament_pb2.TournamentSchedule(
        schedule_id=schedule.schedule_id, organizer_id=schedule.organizer_id, settings=schedule.template(),
        recurrence=_RECURRENCE_ENUMS[schedule.recurrence], time_of_day=schedule.time_of_day,
        time_zone=schedule.time_zone, weekday=schedule.weekday, date=schedule.date,
        open_seconds_before=round(schedule.open_seconds_before),
        next_start=timestamp(schedule.next_start) if schedule.next_start is not None else None,
        tournament_ids=schedule.tournament_ids)

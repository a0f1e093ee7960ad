"""Scheduled and recurring tournaments: made on time through the API, once per occurrence
whichever replica (or restarted one) makes them."""

from __future__ import annotations

import asyncio
import datetime as dt
import time
from zoneinfo import ZoneInfo

import grpc
import pytest

from services.tournament.core.calendar import Recurrence
from services.tournament.schedules import Schedule, Scheduler, ScheduleStore, occurrence_id
from services.tournament.store import TournamentStore
from shared.api.stammtisch.v1 import tournament_pb2
from shared.infra.runtime import Runtime
from shared.sdk import tournament as sdk
from shared.sdk.client import StammtischClient
from tests.services.tournament.test_tournament import logged_in
from tests.services.tournament.test_tournament_life import settings  # noqa: F401  (fast bots)
from tests.services.tournament.test_tournament_organizer import refused

pytestmark = pytest.mark.integration

ZONE = "Europe/Berlin"


def template(name: str = "Daily") -> tournament_pb2.TournamentSettings:
    return tournament_pb2.TournamentSettings(
        name=name, game="willi-stich", format=tournament_pb2.TOURNAMENT_FORMAT_SERIES, capacity=6, rounds=1,
        games_per_round=1, table_size=3)


async def create(client: StammtischClient, **fields: object) -> tournament_pb2.TournamentSchedule:
    schedule = tournament_pb2.TournamentSchedule(settings=template(), **fields)  # type: ignore[arg-type]
    reply = await client.tournaments.CreateSchedule(tournament_pb2.CreateScheduleRequest(schedule=schedule),
                                                    metadata=client.auth)
    return reply.schedule


async def test_a_daily_schedule_makes_its_tournament_which_starts_on_time(stack: dict[str, str]) -> None:
    organizer, stranger = await logged_in(stack, 2)
    daily = tournament_pb2.RECURRENCE_DAILY
    for bad in ({"time_zone": "Mars/Olympus_Mons", "time_of_day": "19:00"},
                {"time_zone": ZONE, "time_of_day": "25:00"},
                {"time_zone": ZONE, "time_of_day": "19:00", "open_seconds_before": -1}):
        await refused(create(organizer, recurrence=daily, **bad), grpc.StatusCode.INVALID_ARGUMENT)
    await refused(create(organizer, recurrence=tournament_pb2.RECURRENCE_ONCE, time_zone=ZONE,
                         time_of_day="19:00", date="2020-01-01"), grpc.StatusCode.INVALID_ARGUMENT)
    await refused(create(organizer, recurrence=tournament_pb2.RECURRENCE_WEEKLY, time_zone=ZONE,
                         time_of_day="19:00", weekday=8), grpc.StatusCode.INVALID_ARGUMENT)

    soon = dt.datetime.now(ZoneInfo(ZONE)) + dt.timedelta(seconds=5)
    schedule = await create(organizer, recurrence=daily, time_zone=ZONE,
                            time_of_day=soon.strftime("%H:%M:%S"), open_seconds_before=3)
    start = schedule.next_start.seconds
    assert abs(start - soon.timestamp()) < 1.01
    tid = occurrence_id(schedule.schedule_id, float(start))

    async def made() -> tournament_pb2.Tournament | None:
        listed = (await organizer.tournaments.ListTournaments(tournament_pb2.ListTournamentsRequest(),
                                                              metadata=organizer.auth)).tournaments
        return next((t for t in listed if t.tournament_id == tid), None)

    while (found := await made()) is None:
        assert time.time() < start, "not made before its start"
        await asyncio.sleep(0.2)
    assert found.status == tournament_pb2.TOURNAMENT_STATUS_REGISTRATION and found.organizer_id == \
        organizer.player_id and found.settings.start_at.seconds == start
    await sdk.register(stranger, tid)  # registration is open before the start
    while (await sdk.get(organizer, tid)).status == tournament_pb2.TOURNAMENT_STATUS_REGISTRATION:
        assert time.time() < start + 10, "not started at its time"
        await asyncio.sleep(0.2)
    assert time.time() >= start - 0.5
    listed = (await organizer.tournaments.ListSchedules(tournament_pb2.ListSchedulesRequest(),
                                                         metadata=organizer.auth)).schedules
    mine = next(s for s in listed if s.schedule_id == schedule.schedule_id)
    assert list(mine.tournament_ids) == [tid]
    assert mine.next_start.seconds == int((soon + dt.timedelta(days=1)).timestamp())
    await refused(stranger.tournaments.DeleteSchedule(tournament_pb2.DeleteScheduleRequest(
        schedule_id=schedule.schedule_id), metadata=stranger.auth), grpc.StatusCode.PERMISSION_DENIED)
    await organizer.tournaments.DeleteSchedule(tournament_pb2.DeleteScheduleRequest(
        schedule_id=schedule.schedule_id), metadata=organizer.auth)
    await refused(organizer.tournaments.DeleteSchedule(tournament_pb2.DeleteScheduleRequest(
        schedule_id=schedule.schedule_id), metadata=organizer.auth), grpc.StatusCode.NOT_FOUND)
    await sdk.get(organizer, tid)
    await organizer.tournaments.CancelTournament(tournament_pb2.CancelTournamentRequest(tournament_id=tid),
                                                 metadata=organizer.auth)
    for client in (organizer, stranger):
        await client.close()


async def test_each_occurrence_is_made_once_by_whichever_replica(runtime: Runtime) -> None:
    schedules, tournaments = ScheduleStore(runtime), TournamentStore(runtime)
    start = time.time() + 3600
    schedule = Schedule("a" * 32, "b" * 32, template("Weekly").SerializeToString().hex(), Recurrence.WEEKLY,
                        dt.datetime.fromtimestamp(start, ZoneInfo(ZONE)).strftime("%H:%M:%S"), ZONE,
                        weekday=dt.datetime.fromtimestamp(start, ZoneInfo(ZONE)).isoweekday(),
                        open_seconds_before=600, next_start=start)
    await schedules.add(schedule)
    first, second = Scheduler(runtime, schedules, tournaments), Scheduler(runtime, schedules, tournaments)
    await first.run_once(now=start - 1200)  # not due yet
    assert await tournaments.newest(10) == []
    await first.run_once(now=start - 300)
    await second.run_once(now=start - 300)  # the lease is the first's: nothing
    made = await tournaments.newest(10)
    assert [t.tournament_id for t in made] == [occurrence_id(schedule.schedule_id, start)]
    assert made[0].settings.start_at == start and made[0].organizer_id == "b" * 32
    # A replica that died after making the tournament but before recording it: the successor
    # (restarted, new lease) finds the occurrence made and only moves the schedule on.
    await schedules.update(schedule)  # next_start back at this occurrence
    await first.stop()
    await second.run_once(now=start - 200)
    assert len(await tournaments.newest(10)) == 1
    moved = await schedules.get(schedule.schedule_id)
    assert moved is not None and moved.next_start == pytest.approx(start + 7 * 86_400, abs=3600)
    # A deleted schedule is not written back by a scheduler that read it before.
    await schedules.delete(schedule.schedule_id)
    assert not await schedules.update(moved) and await schedules.get(schedule.schedule_id) is None

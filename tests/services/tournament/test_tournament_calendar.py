"""When scheduled and recurring tournaments start: local times in IANA zones, DST included."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import pytest

from services.tournament.core.calendar import Recurrence, Rule, next_start, parse_time

BERLIN = ZoneInfo("Europe/Berlin")


def at(*parts: int) -> float:
    return dt.datetime(*parts, tzinfo=BERLIN).timestamp()


def utc(stamp: float | None) -> str:
    assert stamp is not None
    return dt.datetime.fromtimestamp(stamp, dt.UTC).strftime("%Y-%m-%d %H:%M:%S")


def test_daily_keeps_the_local_time_across_the_dst_change() -> None:
    rule = Rule(Recurrence.DAILY, dt.time(19, 30), "Europe/Berlin")
    first = next_start(rule, at(2026, 3, 28, 12, 0))
    assert utc(first) == "2026-03-28 18:30:00"  # CET, UTC+1
    second = next_start(rule, first or 0)
    assert utc(second) == "2026-03-29 17:30:00"  # CEST, UTC+2: still 19:30 in Berlin
    assert utc(next_start(rule, at(2026, 3, 28, 19, 30))) == "2026-03-29 17:30:00"  # strictly after


def test_weekly_on_its_weekday_and_seconds() -> None:
    rule = Rule(Recurrence.WEEKLY, dt.time(20, 0, 15), "Europe/Berlin", weekday=3)  # Wednesdays
    start = next_start(rule, at(2026, 12, 3, 21, 0))  # a Thursday evening
    assert start is not None
    local = dt.datetime.fromtimestamp(start, BERLIN)
    assert (local.date(), local.time()) == (dt.date(2026, 12, 9), dt.time(20, 0, 15))


def test_once_is_done_when_past() -> None:
    rule = Rule(Recurrence.ONCE, dt.time(18, 0), "UTC", date=dt.date(2026, 12, 24))
    assert utc(next_start(rule, at(2026, 12, 1, 0, 0))) == "2026-12-24 18:00:00"
    assert next_start(rule, at(2026, 12, 25, 0, 0)) is None


@pytest.mark.parametrize(("rule", "problem"), [
    (Rule(Recurrence.DAILY, dt.time(19), "Mars/Olympus_Mons"), "unknown time zone"),
    (Rule(Recurrence.WEEKLY, dt.time(19), "UTC", weekday=0), "weekday 1"),
    (Rule(Recurrence.ONCE, dt.time(19), "UTC"), "date"),
])
def test_rules_are_checked(rule: Rule, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        rule.check()


@pytest.mark.parametrize("text", ["7:30", "25:00", "19:30+01:00", "", "19h30"])
def test_times_are_checked(text: str) -> None:
    with pytest.raises(ValueError, match="HH:MM"):
        parse_time(text)
    assert parse_time("07:30") == dt.time(7, 30) and parse_time("07:30:05") == dt.time(7, 30, 5)

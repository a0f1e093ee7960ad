"""When a recurring tournament's next occurrence starts: a local time of day in an IANA time
zone (zoneinfo), once on a date, daily, or weekly on a weekday. Pure and deterministic, so any
replica computes the same occurrences.

A local time that a daylight-saving change skips or repeats is resolved as zoneinfo does for
``fold=0`` (the earlier of a repeated hour; a skipped hour's time lands an hour later).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from enum import StrEnum
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

#: Days looked ahead for the next occurrence at most (a week covers every rule).
HORIZON_DAYS = 8


class Recurrence(StrEnum):
    """How often a schedule makes a tournament."""

    ONCE = "once"
    DAILY = "daily"
    WEEKLY = "weekly"


@dataclass(frozen=True)
class Rule:
    """A schedule's timing: ``at`` local time in ``zone``; ``weekday`` 1 (Monday) to 7 for weekly;
    ``date`` for once."""

    recurrence: Recurrence
    at: dt.time
    zone: str
    weekday: int = 0
    date: dt.date | None = None

    def check(self) -> None:
        """ValueError naming what is wrong."""
        try:
            ZoneInfo(self.zone)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise ValueError(f"unknown time zone {self.zone!r} (an IANA name like Europe/Berlin)") from exc
        if self.recurrence == Recurrence.WEEKLY and not 1 <= self.weekday <= 7:
            raise ValueError("a weekly schedule needs weekday 1 (Monday) to 7 (Sunday)")
        if self.recurrence == Recurrence.ONCE and self.date is None:
            raise ValueError("a one-off schedule needs its date (YYYY-MM-DD)")


def parse_time(text: str) -> dt.time:
    """``HH:MM`` or ``HH:MM:SS``; ValueError otherwise."""
    problem = f"time_of_day must be HH:MM or HH:MM:SS, got {text!r}"
    if len(text) not in (5, 8):
        raise ValueError(problem)
    try:
        return dt.time.fromisoformat(text)
    except ValueError as exc:
        raise ValueError(problem) from exc


def next_start(rule: Rule, after: float) -> float | None:
    """The first occurrence strictly after unix time ``after`` (None: a one-off that is past)."""
    zone = ZoneInfo(rule.zone)
    if rule.recurrence == Recurrence.ONCE:
        assert rule.date is not None
        start = dt.datetime.combine(rule.date, rule.at, zone).timestamp()
        return start if start > after else None
    day = dt.datetime.fromtimestamp(after, zone).date()
    for offset in range(HORIZON_DAYS + 1):
        date = day + dt.timedelta(days=offset)
        if rule.recurrence == Recurrence.WEEKLY and date.isoweekday() != rule.weekday:
            continue
        start = dt.datetime.combine(date, rule.at, zone).timestamp()
        if start > after:
            return start
    raise AssertionError("no occurrence within a week")  # every rule has one

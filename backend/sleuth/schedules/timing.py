"""When a schedule is due: a cron expression in an IANA time zone, or a fixed interval (`every`).

Cron is evaluated by cronsim on wall-clock time in the schedule's zone, so `0 7 * * 1-5` in
Europe/Berlin is 07:00 there in summer and in winter; a time that a daylight-saving change skips
runs at the first minute after the gap, and one that it repeats runs once. An interval is a fixed
number of seconds on a grid that starts at the schedule's previous due time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from cronsim import CronSim, CronSimError

from sleuth.core.durations import parse_duration

MIN_INTERVAL_S = 60  # as often as cron's finest step; a tighter loop is not research
MAX_INTERVAL_S = 366 * 86400
CRON_FIELDS = 5  # cronsim also reads a sixth, seconds, field: a schedule's finest step is a minute


class TimingError(ValueError):
    """A cron expression, time zone or interval that cannot be used; the message says which and why."""


@dataclass(frozen=True)
class Timing:
    """Exactly one of `cron` and `every_s`."""

    cron: str | None
    every_s: int | None
    timezone: str

    def next_after(self, moment: datetime) -> datetime:
        """The first due time strictly after `moment` (an aware datetime), in UTC."""
        if self.cron is not None:
            local = moment.astimezone(ZoneInfo(self.timezone))
            return next(CronSim(self.cron, local)).astimezone(UTC)
        assert self.every_s is not None
        return (moment + timedelta(seconds=self.every_s)).astimezone(UTC)

    def next_after_both(self, due: datetime, now: datetime) -> datetime:
        """The schedule's next due time after it fired for `due` at `now`: the first one after both,
        so the due times a downtime missed are passed over (they were made up by this one firing)."""
        if self.cron is not None:
            return self.next_after(max(due, now))
        assert self.every_s is not None
        steps = max(1, math.floor((now - due).total_seconds() / self.every_s) + 1)
        return (due + timedelta(seconds=steps * self.every_s)).astimezone(UTC)


def parse_every(text: str) -> int:
    """Seconds of an interval written as `6h`, `30m`, `1h30m`; at least a minute."""
    try:
        seconds = parse_duration(text)
    except ValueError as exc:
        raise TimingError(f"every: {exc}") from None
    if seconds < MIN_INTERVAL_S:
        raise TimingError(f"every: {text!r} is shorter than the shortest interval, 1m")
    if seconds > MAX_INTERVAL_S:
        raise TimingError(f"every: {text!r} is longer than the longest interval, 366 days")
    return int(seconds)


def check_zone(name: str) -> str:
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise TimingError(f"timezone: {name!r} is not an IANA time zone (e.g. Europe/Berlin, UTC)") from None
    return name


def check_cron(expression: str) -> str:
    expression = " ".join(expression.split())
    if len(expression.split()) != CRON_FIELDS:
        raise TimingError(
            f"cron: {expression[:100]!r} is not a cron expression (five fields: minute hour day-of-month month weekday)"
        )
    try:
        CronSim(expression, datetime(2000, 1, 1, tzinfo=UTC))
    except CronSimError as exc:
        raise TimingError(f"cron: {expression!r} is not a cron expression ({exc})") from None
    return expression


def timing(cron: str | None, every: str | None, timezone: str) -> Timing:
    """A checked timing from what a user wrote: one of `cron` and `every`, and a time zone."""
    if (cron is None) == (every is None):
        raise TimingError("give either cron (e.g. '0 7 * * 1-5') or every (e.g. '6h'), not both or neither")
    zone = check_zone(timezone)
    if cron is not None:
        return Timing(cron=check_cron(cron), every_s=None, timezone=zone)
    assert every is not None
    return Timing(cron=None, every_s=parse_every(every), timezone=zone)

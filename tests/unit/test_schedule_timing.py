"""Due times of schedules: cron in IANA zones across daylight-saving changes, intervals, bad input."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

from sleuth.schedules.timing import TimingError, timing


def _series(cron: str, zone: str, start: datetime, count: int) -> list[datetime]:
    due = timing(cron, None, zone)
    found, moment = [], start
    for _ in range(count):
        moment = due.next_after(moment)
        found.append(moment)
    return found


def test_weekday_mornings_in_berlin_stay_at_seven_local_across_the_spring_change() -> None:
    # Berlin moves from UTC+1 to UTC+2 on Sunday 2026-03-29.
    got = _series("0 7 * * 1-5", "Europe/Berlin", datetime(2026, 3, 26, 12, tzinfo=UTC), 3)
    assert got == [
        datetime(2026, 3, 27, 6, tzinfo=UTC),  # Friday, winter time
        datetime(2026, 3, 30, 5, tzinfo=UTC),  # Monday, summer time: the weekend is skipped
        datetime(2026, 3, 31, 5, tzinfo=UTC),
    ]


def test_new_york_mornings_across_both_changes() -> None:
    spring = _series("0 7 * * *", "America/New_York", datetime(2026, 3, 7, 0, tzinfo=UTC), 2)
    assert spring == [datetime(2026, 3, 7, 12, tzinfo=UTC), datetime(2026, 3, 8, 11, tzinfo=UTC)]
    autumn = _series("0 7 * * *", "America/New_York", datetime(2026, 10, 31, 0, tzinfo=UTC), 2)
    assert autumn == [datetime(2026, 10, 31, 11, tzinfo=UTC), datetime(2026, 11, 1, 12, tzinfo=UTC)]


def test_a_skipped_local_time_runs_after_the_gap_and_a_repeated_one_runs_once() -> None:
    # 02:30 does not exist in Berlin on 2026-03-29 and exists twice on 2026-10-25.
    spring = _series("30 2 * * *", "Europe/Berlin", datetime(2026, 3, 28, 12, tzinfo=UTC), 2)
    assert spring == [datetime(2026, 3, 29, 1, tzinfo=UTC), datetime(2026, 3, 30, 0, 30, tzinfo=UTC)]
    autumn = _series("30 2 * * *", "Europe/Berlin", datetime(2026, 10, 24, 12, tzinfo=UTC), 2)
    assert autumn == [datetime(2026, 10, 25, 0, 30, tzinfo=UTC), datetime(2026, 10, 26, 1, 30, tzinfo=UTC)]


def test_an_interval_is_a_grid_from_the_last_due_time_and_downtime_collapses_to_one_slot() -> None:
    every = timing(None, "6h", "UTC")
    assert every.every_s == 6 * 3600
    due = datetime(2026, 1, 1, 0, tzinfo=UTC)
    assert every.next_after_both(due, due) == datetime(2026, 1, 1, 6, tzinfo=UTC)
    # Fired 20 hours late: the next due time is the next slot of the grid after now, not the missed ones.
    assert every.next_after_both(due, datetime(2026, 1, 1, 20, tzinfo=UTC)) == datetime(2026, 1, 2, 0, tzinfo=UTC)


def test_cron_after_downtime_is_next_due_after_now() -> None:
    daily = timing("0 7 * * *", None, "UTC")
    due, now = datetime(2026, 1, 1, 7, tzinfo=UTC), datetime(2026, 1, 5, 9, tzinfo=UTC)
    assert daily.next_after_both(due, now) == datetime(2026, 1, 6, 7, tzinfo=UTC)


@pytest.mark.parametrize(
    ("cron", "every", "zone", "says"),
    [
        ("0 7 * *", None, "UTC", "cron: '0 7 * *' is not a cron expression"),
        ("61 * * * *", None, "UTC", "cron: '61 * * * *' is not a cron expression"),
        ("0 7 * * *", None, "Europe/Atlantis", "timezone: 'Europe/Atlantis' is not an IANA time zone"),
        (None, "soon", "UTC", "every: 'soon' is not a duration"),
        (None, "10s", "UTC", "shorter than the shortest interval"),
        (None, "9999999999h", "UTC", "longer than the longest interval"),
        ("* * * * * *", None, "UTC", "is not a cron expression (five fields"),
        ("0 7 * * *", "6h", "UTC", "not both or neither"),
        (None, None, "UTC", "not both or neither"),
    ],
)
def test_bad_timings_say_what_is_wrong(cron: str | None, every: str | None, zone: str, says: str) -> None:
    with pytest.raises(TimingError, match=re.escape(says)):
        timing(cron, every, zone)

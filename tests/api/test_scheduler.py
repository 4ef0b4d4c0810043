"""The scheduler on the store: exactly once per due time with schedulers racing, skip while the
previous run runs, one catch-up after downtime, jitter. Time is a virtual wall clock: each tick is
told what time it is, nothing sleeps.

Runs on SQLite, and on PostgreSQL when SLEUTH_TEST_DATABASE_URL is set (scripts/test's second pass).
"""

from __future__ import annotations

import asyncio
import os
from datetime import UTC, datetime, timedelta

from sleuth.config import Settings
from sleuth.core.ids import new_id
from sleuth.schedules.scheduler import FireRefused, Scheduler, hashed_jitter
from sleuth.schedules.specs import ScheduleSpec, new_schedule
from sleuth.store.records import RunRecord, now_iso
from sleuth.store.schedules import ScheduleRecord, ScheduleStore
from sleuth.store.store import Store
from sleuth_testkit.clock import ManualClock

START = datetime(2026, 3, 2, 6, 0, tzinfo=UTC)  # a Monday, 07:00 in Berlin


class Runs:
    """A stand-in for starting runs: each fire makes a running run in the schedule's session."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.started: list[tuple[str, str]] = []  # (schedule id, run id)
        self.refuse: str | None = None

    async def fire(self, schedule: ScheduleRecord) -> str:
        if self.refuse:
            raise FireRefused(self.refuse)
        run_id = new_id("r")
        record = RunRecord(
            id=run_id,
            session_id=schedule.session_id,
            question=schedule.question,
            kind="question",
            status="running",
            owner_host="test",
            owner_pid=os.getpid(),
            created_at=now_iso(),
        )
        await asyncio.to_thread(self.store.create_run, record)
        self.started.append((schedule.id, run_id))
        return run_id

    def finish(self, run_id: str) -> None:
        self.store.finish_run(run_id, status="completed", stop_reason="completed")


def add(store: Store, spec: ScheduleSpec, now: datetime = START) -> ScheduleRecord:
    record, title = new_schedule(spec, Settings(), now)
    ScheduleStore(store.database).create(record, title)
    return record


def scheduler(store: Store, runs: Runs, at: list[datetime], **kwargs: object) -> Scheduler:
    return Scheduler(ScheduleStore(store.database), runs.fire, clock=ManualClock(), wall=lambda: at[0], **kwargs)  # type: ignore[arg-type]


async def test_two_schedulers_racing_fire_each_due_time_once(store: Store) -> None:
    schedules = [add(store, ScheduleSpec(question=f"Q{i}", every="1h")) for i in range(8)]
    other = Store.from_settings(Settings())  # a second server: its own connections
    try:
        now = [START + timedelta(hours=1)]
        runs_a, runs_b = Runs(store), Runs(other)
        a, b = scheduler(store, runs_a, now), scheduler(other, runs_b, now)
        for _ in range(3):  # three due times, each raced
            await asyncio.gather(a.tick(), b.tick(), a.tick(), b.tick())
            for _, run_id in runs_a.started + runs_b.started:
                if store.get_run(run_id) and store.get_run(run_id).status == "running":  # type: ignore[union-attr]
                    runs_a.finish(run_id)
            now[0] += timedelta(hours=1)
    finally:
        other.close()
    started = runs_a.started + runs_b.started
    assert sorted(s for s, _ in started) == sorted([s.id for s in schedules] * 3)
    for schedule in schedules:
        firings = ScheduleStore(store.database).firings(schedule.id)
        assert [f.status for f in firings] == ["fired"] * 3
        assert len({f.due_at for f in firings}) == 3


async def test_a_firing_while_the_previous_run_runs_is_skipped_and_recorded(store: Store) -> None:
    schedule = add(store, ScheduleSpec(question="Q", every="1h"))
    now = [START + timedelta(hours=1)]
    runs = Runs(store)
    ticker = scheduler(store, runs, now)
    first = await ticker.tick()
    assert [f.status for f in first] == ["fired"]
    now[0] += timedelta(hours=1)
    second = await ticker.tick()  # the first run is still running
    assert [(f.status, f.run_id) for f in second] == [("skipped", None)]
    assert "still running" in (second[0].detail or "")
    runs.finish(first[0].run_id or "")
    now[0] += timedelta(hours=1)
    third = await ticker.tick()
    assert [f.status for f in third] == ["fired"]
    assert len(runs.started) == 2
    stored = ScheduleStore(store.database).firings(schedule.id)
    assert [f.status for f in stored] == ["fired", "skipped", "fired"]


async def test_after_downtime_a_missed_due_time_fires_once(store: Store) -> None:
    schedule = add(store, ScheduleSpec(question="Q", cron="0 7 * * *", timezone="Europe/Berlin"))
    assert schedule.next_due_at.startswith("2026-03-03T06:00")  # first due the next morning
    now = [START + timedelta(days=4, hours=3)]  # down for four mornings
    runs = Runs(store)
    ticker = scheduler(store, runs, now)
    fired = await ticker.tick()
    assert [f.due_at[:16] for f in fired] == ["2026-03-03T06:00"]  # the oldest missed one, once
    assert await ticker.tick() == []
    after = ScheduleStore(store.database).get(schedule.id)
    assert after is not None and after.next_due_at.startswith("2026-03-07T06:00")  # the next after now
    assert len(runs.started) == 1


async def test_jitter_delays_a_firing_within_its_spread(store: Store) -> None:
    add(store, ScheduleSpec(question="Q", every="1h"))
    due = START + timedelta(hours=1)
    now = [due]
    runs = Runs(store)
    ticker = scheduler(store, runs, now, jitter=lambda schedule_id, due_at: 20.0)
    assert await ticker.tick() == []
    now[0] = due + timedelta(seconds=19)
    assert await ticker.tick() == []
    now[0] = due + timedelta(seconds=20)
    assert [f.status for f in await ticker.tick()] == ["fired"]


def test_hashed_jitter_is_the_same_everywhere_and_within_its_spread() -> None:
    jitter = hashed_jitter(30.0)
    values = {jitter(f"sch_{i}", "2026-01-01T00:00:00.000+00:00") for i in range(50)}
    assert all(0 <= v < 30 for v in values) and len(values) > 40
    assert jitter("sch_1", "d") == hashed_jitter(30.0)("sch_1", "d")
    assert hashed_jitter(0)("sch_1", "d") == 0


async def test_a_refused_start_is_a_failed_firing_with_its_reason(store: Store) -> None:
    schedule = add(store, ScheduleSpec(question="Q", every="1h"))
    now = [START + timedelta(hours=1)]
    runs = Runs(store)
    runs.refuse = "the server is running its maximum of 2 runs; retry later"
    fired = await scheduler(store, runs, now).tick()
    assert [(f.status, f.detail) for f in fired] == [("failed", runs.refuse)]
    assert ScheduleStore(store.database).firings(schedule.id)[0].status == "failed"


async def test_a_paused_schedule_does_not_fire(store: Store) -> None:
    schedule = add(store, ScheduleSpec(question="Q", every="1h"))
    ScheduleStore(store.database).update(schedule.id, {"paused": True})
    now = [START + timedelta(hours=5)]
    assert await scheduler(store, Runs(store), now).tick() == []


def test_a_schedule_owns_a_session_and_deleting_it_keeps_the_history(store: Store) -> None:
    schedule = add(store, ScheduleSpec(question="Watch the changelog", every="6h"))
    session = store.get_session(schedule.session_id)
    assert session is not None and session.title == "Watch the changelog"
    schedules = ScheduleStore(store.database)
    assert [s.id for s in schedules.all()] == [schedule.id]
    assert schedules.delete(schedule.id) is True
    assert schedules.get(schedule.id) is None and schedules.delete(schedule.id) is False
    assert store.get_session(schedule.session_id) is not None


async def test_a_schedule_that_cannot_be_fired_does_not_stop_the_others(store: Store) -> None:
    broken = add(store, ScheduleSpec(question="Broken", every="1h"))
    store.database.execute("UPDATE schedules SET every_s = NULL, cron = 'not cron' WHERE id = ?", (broken.id,))
    fine = add(store, ScheduleSpec(question="Fine", every="1h"))
    now = [START + timedelta(hours=1)]
    runs = Runs(store)
    fired = await scheduler(store, runs, now).tick()
    assert [f.schedule_id for f in fired] == [fine.id]

"""The scheduler: a loop that fires each due schedule once per due time, whichever server runs it.

Every server (`sleuth serve`, one or many sharing a database) runs one. A tick reads the schedules
whose due time has come and, for each, moves its due time on with the store's conditional update
(`ScheduleStore.claim`): the one scheduler that wins fires it, the others see the row moved and
leave it. The policies:

- skip: while the schedule's previous run still runs, the firing is recorded as `skipped`;
- catch-up: after downtime the missed due time fires once, and the next due time is the first
  one after now (`Timing.next_after_both`), not each slot that was missed;
- jitter: a schedule waits a few seconds (its own, `Jitter`) past its due time, so schedules due
  at the same minute do not all start at once.

Time is injected: `wall` says what time it is, `clock` sleeps between ticks, so tests drive ticks
on a virtual clock.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from sleuth.core.clock import Clock
from sleuth.core.ids import new_id
from sleuth.schedules.timing import Timing
from sleuth.store.database import DatabaseError
from sleuth.store.schedules import Delivery, FiringRecord, ScheduleRecord, ScheduleStore, from_utc_text, utc_text

log = logging.getLogger(__name__)

Wall = Callable[[], datetime]
# Seconds a schedule waits past a due time before it fires (by schedule id and due time).
Jitter = Callable[[str, str], float]
# Starts the schedule's run; returns the run id, or raises FireRefused.
Fire = Callable[[ScheduleRecord], Awaitable[str]]
# Delivers what a finished firing's run found (it records the outcome itself).
Deliver = Callable[[FiringRecord], Awaitable[object]]


class FireRefused(Exception):
    """The run could not start (the server is full, a source is gone, the session was deleted); the
    message says why and is recorded with the failed firing."""


def wall_now() -> datetime:
    return datetime.now(UTC)


def hashed_jitter(max_s: float) -> Jitter:
    """A spread in [0, max_s) that is the same for a schedule and due time on every server."""

    def jitter(schedule_id: str, due_at: str) -> float:
        if max_s <= 0:
            return 0.0
        digest = hashlib.sha256(f"{schedule_id}|{due_at}".encode()).digest()
        return int.from_bytes(digest[:4], "big") / 2**32 * max_s

    return jitter


def delivery_for(schedule: ScheduleRecord) -> Delivery:
    """What a fired run's firing waits for: a delivery once the run ends, or nothing to send."""
    return "pending" if schedule.notify != "never" and (schedule.webhook_url or schedule.email) else "none"


def fired_now(schedule: ScheduleRecord, run_id: str, now: datetime) -> FiringRecord:
    """The firing of a run started by hand ("run now"): due when it was asked for."""
    at = utc_text(now)
    return FiringRecord(
        id=new_id("fir"),
        schedule_id=schedule.id,
        due_at=at,
        fired_at=at,
        status="fired",
        run_id=run_id,
        detail="run now",
        delivery=delivery_for(schedule),
    )


def timing_of(schedule: ScheduleRecord) -> Timing:
    return Timing(cron=schedule.cron, every_s=schedule.every_s, timezone=schedule.timezone)


class Scheduler:
    def __init__(
        self,
        schedules: ScheduleStore,
        fire: Fire,
        *,
        clock: Clock,
        wall: Wall = wall_now,
        jitter: Jitter | None = None,
        tick_s: float = 15.0,
        deliver: Deliver | None = None,
    ) -> None:
        self.schedules = schedules
        self._fire = fire
        self._clock = clock
        self._wall = wall
        self._jitter = jitter or hashed_jitter(0.0)
        self._tick_s = tick_s
        self._deliver = deliver
        self._deliveries: set[asyncio.Task[object]] = set()

    async def run(self) -> None:
        """Tick until cancelled; a failing tick (the database away for a moment) is logged, not fatal."""
        while True:
            try:
                await self.tick()
            except DatabaseError as exc:
                log.warning("scheduler: %s", exc)
            except Exception:
                log.exception("scheduler tick failed")
            await self._clock.sleep(self._tick_s)

    async def tick(self) -> list[FiringRecord]:
        """Fire what is due now (that this scheduler wins) and start the deliveries that are ready."""
        now = self._wall()
        fired: list[FiringRecord] = []
        for schedule in await asyncio.to_thread(self.schedules.due, now):
            try:
                firing = await self._take(schedule, now)
            except DatabaseError:
                raise  # the store is away: the whole tick waits for the next one
            except Exception:  # one schedule that cannot be fired must not stop the others
                log.exception("schedule %s could not be fired", schedule.id)
                continue
            if firing is not None:
                fired.append(firing)
        await self._start_deliveries()
        return fired

    async def _take(self, schedule: ScheduleRecord, now: datetime) -> FiringRecord | None:
        """Fire the schedule's due time if its jitter has passed and this scheduler claims it first."""
        due = from_utc_text(schedule.next_due_at)
        if now < due + timedelta(seconds=self._jitter(schedule.id, schedule.next_due_at)):
            return None
        following = utc_text(timing_of(schedule).next_after_both(due, now))
        if not await asyncio.to_thread(self.schedules.claim, schedule.id, schedule.next_due_at, following):
            return None  # another scheduler fired this due time
        return await self.fire(schedule, schedule.next_due_at, now)

    async def fire(self, schedule: ScheduleRecord, due_at: str, now: datetime) -> FiringRecord:
        """Start the schedule's run for `due_at`, which this scheduler has claimed, and record it."""
        firing = FiringRecord(
            id=new_id("fir"), schedule_id=schedule.id, due_at=due_at, fired_at=utc_text(now), status="fired"
        )
        if await asyncio.to_thread(self.schedules.session_running, schedule.session_id):
            firing = replace(firing, status="skipped", detail="the previous run of this schedule was still running")
        else:
            try:
                run_id = await self._fire(schedule)
            except FireRefused as exc:
                firing = replace(firing, status="failed", detail=str(exc))
            except Exception as exc:  # the due time is claimed: it is recorded as failed, not lost
                log.exception("schedule %s could not start its run", schedule.id)
                firing = replace(firing, status="failed", detail=f"internal error: {type(exc).__name__}")
            else:
                firing = replace(firing, run_id=run_id, delivery=delivery_for(schedule))
        await asyncio.to_thread(self.schedules.record_firing, firing)
        log.info("schedule %s due %s: %s %s", schedule.id, due_at, firing.status, firing.run_id or firing.detail or "")
        return firing

    async def _start_deliveries(self) -> None:
        if self._deliver is None:
            return
        for firing in await asyncio.to_thread(self.schedules.deliverable):
            if await asyncio.to_thread(self.schedules.claim_delivery, firing.id):
                # In the background: a slow receiver's retries never hold up the next firing.
                task = asyncio.ensure_future(self._deliver(firing))
                self._deliveries.add(task)
                task.add_done_callback(self._deliveries.discard)

    async def deliveries_done(self) -> None:
        """Wait for the deliveries under way (tests; a server's shutdown)."""
        while self._deliveries:
            await asyncio.gather(*list(self._deliveries), return_exceptions=True)

    async def close(self) -> None:
        for task in list(self._deliveries):
            task.cancel()
        await asyncio.gather(*list(self._deliveries), return_exceptions=True)

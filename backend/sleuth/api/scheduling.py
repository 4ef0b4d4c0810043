"""Schedules on a server: starting a schedule's run as any run starts (`starting.py`), and the
scheduler loop of `sleuth serve`.

Every server runs the loop (when `SLEUTH_SCHEDULER` is on): with several servers sharing one
database each due time still fires once, because firing takes the store's conditional claim
first. Scaled out, the run it starts is queued for the workers like any other, so `sleuth worker`
needs no scheduler of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime

from sleuth.api import starting
from sleuth.api.refused import Refused
from sleuth.api.services import Services
from sleuth.core.clock import SystemClock
from sleuth.schedules.delivery import Deliverer
from sleuth.schedules.scheduler import FireRefused, Scheduler, fired_now, hashed_jitter
from sleuth.store.errors import NotFound
from sleuth.store.schedules import FiringRecord, ScheduleRecord, ScheduleStore
from sleuth.stream.results import Snapshot


def schedules_of(services: Services) -> ScheduleStore:
    return ScheduleStore(services.store.database)


async def start_scheduled(services: Services, schedule: ScheduleRecord) -> starting.Started:
    """Start the schedule's question in its session, compared with its last snapshot; `Refused` if it cannot."""
    previous = await asyncio.to_thread(schedules_of(services).previous_snapshot, schedule.session_id)
    try:
        return await starting.start_run(
            services,
            schedule.session_id,
            schedule.question,
            mode=schedule.mode,
            clarify=False,  # nobody is there to answer
            time_budget_s=schedule.time_budget_s,
            chosen=schedule.sources,
            scheduled=True,
            previous=Snapshot.model_validate(previous) if previous else None,
        )
    except NotFound as exc:  # its session was deleted
        raise Refused(409, f"the schedule's session is gone ({exc})") from None


async def run_now(services: Services, schedule: ScheduleRecord, now: datetime) -> FiringRecord:
    """Fire the schedule at once, beside its due times; `Refused` (409) while its last run still runs."""
    if await services.manager.session_in_use(schedule.session_id):
        raise Refused(409, "the schedule's previous run is still running; wait or cancel it")
    started = await start_scheduled(services, schedule)
    firing = fired_now(schedule, started.record.id, now)
    await asyncio.to_thread(schedules_of(services).record_firing, firing)
    return firing


def make_scheduler(services: Services) -> Scheduler:
    settings = services.settings

    async def fire(schedule: ScheduleRecord) -> str:
        try:
            return (await start_scheduled(services, schedule)).record.id
        except Refused as exc:
            raise FireRefused(exc.detail) from None

    deliverer = Deliverer(settings, services.store)
    return Scheduler(
        schedules_of(services),
        fire,
        clock=SystemClock(),
        jitter=hashed_jitter(settings.schedule_jitter_s),
        tick_s=settings.schedule_tick_s,
        deliver=deliverer.deliver,
    )


@asynccontextmanager
async def running_scheduler(services: Services) -> AsyncIterator[Scheduler]:
    """The server's scheduler, ticking in the background while the block runs (if the settings want it)."""
    scheduler = make_scheduler(services)
    task = asyncio.create_task(scheduler.run()) if services.settings.scheduler else None
    try:
        yield scheduler
    finally:
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await scheduler.close()

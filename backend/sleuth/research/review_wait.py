"""Time a run spends waiting for its user does not count against its deadlines.

While the run waits, its deadlines move forward by the longest possible wait; afterwards they are
set to the originals plus the time really waited. The run-level watchdog re-reads the deadline
whenever its timer fires, so a moved deadline is honoured without restarting anything.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable
from typing import TypeVar

from sleuth.clock import Clock
from sleuth.research.deadlines import DeadlineReached, RunDeadlines

T = TypeVar("T")


def shift_deadlines(deadlines: RunDeadlines, by_s: float) -> RunDeadlines:
    """Every run-level absolute deadline `by_s` later; the start (and so elapsed time) is unchanged."""
    return dataclasses.replace(
        deadlines, force_report_at=deadlines.force_report_at + by_s, deadline_at=deadlines.deadline_at + by_s
    )


async def run_until_moving(clock: Clock, deadline: Callable[[], float], work: Awaitable[T]) -> T:
    """Like `run_until`, but the deadline is read again each time the timer fires, so it may move later."""
    task = asyncio.ensure_future(work)
    try:
        while True:
            remaining = deadline() - clock.now()
            if remaining <= 0:
                break
            timer = asyncio.ensure_future(clock.sleep(remaining))
            try:
                await asyncio.wait({task, timer}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                timer.cancel()
                await asyncio.gather(timer, return_exceptions=True)
            if task.done():
                return task.result()
    except asyncio.CancelledError:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        raise
    if task.done():
        return task.result()
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    raise DeadlineReached

"""Deadlines of one run and the primitives that enforce them on the injectable clock."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Iterable
from dataclasses import dataclass
from typing import TypeVar

from sleuth.clock import Clock
from sleuth.config import Settings

T = TypeVar("T")


class DeadlineReached(Exception):
    """The awaited work did not finish before its deadline and was cancelled."""


@dataclass(frozen=True)
class RunDeadlines:
    """Absolute times (on the run's clock) of the run-level levels of the timeout cascade."""

    started_at: float
    force_report_at: float  # no more orchestrator cycles; agents must be done
    deadline_at: float  # the run ends, always
    report_timeout_s: float
    agent_force_report_s: float
    agent_timeout_s: float
    agent_report_grace_s: float

    @classmethod
    def start(cls, settings: Settings, now: float) -> RunDeadlines:
        return cls(
            started_at=now,
            force_report_at=now + settings.force_report_s,
            deadline_at=now + settings.effective_deadline_s,
            report_timeout_s=settings.report_timeout_s,
            agent_force_report_s=settings.agent_force_report_s,
            agent_timeout_s=settings.agent_timeout_s,
            agent_report_grace_s=settings.agent_report_grace_s,
        )

    def agent_force_report_at(self, agent_started_at: float) -> float:
        """Agents stop researching early enough to report before the orchestrator's force report."""
        return min(agent_started_at + self.agent_force_report_s, self.force_report_at - self.agent_report_grace_s)

    def agent_kill_at(self, agent_started_at: float) -> float:
        return min(agent_started_at + self.agent_timeout_s, self.force_report_at)

    def report_end_at(self, report_started_at: float) -> float:
        """The final report is cut at its own timeout, and always a second before the hard deadline."""
        return min(report_started_at + self.report_timeout_s, self.deadline_at - 1.0)


async def run_until(clock: Clock, at: float, work: Awaitable[T]) -> T:
    """Await `work`, cancelling it and raising DeadlineReached if `at` passes first."""
    task = asyncio.ensure_future(work)
    if clock.now() >= at:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        raise DeadlineReached
    timer = asyncio.ensure_future(clock.sleep(at - clock.now()))
    try:
        await asyncio.wait({task, timer}, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        task.cancel()
        timer.cancel()
        await asyncio.gather(task, timer, return_exceptions=True)
        raise
    if task.done():
        timer.cancel()
        await asyncio.gather(timer, return_exceptions=True)
        return task.result()
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    raise DeadlineReached


async def wait_all_until(clock: Clock, at: float, tasks: Iterable[asyncio.Task[T]]) -> set[asyncio.Task[T]]:
    """Wait for all `tasks` or until `at`; cancel and await the stragglers, and return them."""
    pending: set[asyncio.Task[T]] = set(tasks)
    if not pending:
        return set()
    timer = asyncio.ensure_future(clock.sleep(max(0.0, at - clock.now())))
    try:
        while pending and not timer.done():
            await asyncio.wait([*pending, timer], return_when=asyncio.FIRST_COMPLETED)
            pending = {task for task in pending if not task.done()}
    finally:
        timer.cancel()
        await asyncio.gather(timer, return_exceptions=True)
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
    return pending

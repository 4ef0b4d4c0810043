"""Deadlines of one run and the primitives that enforce them on the injectable clock."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Iterable
from dataclasses import dataclass
from typing import TypeVar

from sleuth.config import Settings
from sleuth.core.clock import Clock

T = TypeVar("T")
U = TypeVar("U")


# The reference cascade is the documented default: a heavy run's default budget (2110 s) reproduces
# it exactly, and any other budget scales it. Agent levels are shares of the research window (the
# orchestrator's force report), so an explicit SLEUTH_FORCE_REPORT_S rescales them too: a short
# window must never leave agents a grace longer than the window itself.
REFERENCE_FORCE_REPORT_S = 1800.0
REFERENCE_REPORT_TIMEOUT_S = 300.0
REFERENCE_MARGIN_S = 10.0
REFERENCE_BUDGET_S = REFERENCE_FORCE_REPORT_S + REFERENCE_REPORT_TIMEOUT_S + REFERENCE_MARGIN_S
AGENT_FORCE_REPORT_SHARE = 720.0 / REFERENCE_FORCE_REPORT_S
AGENT_TIMEOUT_SHARE = 1.0
AGENT_REPORT_GRACE_SHARE = 60.0 / REFERENCE_FORCE_REPORT_S
# An agent needs one research turn and its report: two model calls at the run's pace.
AGENT_MIN_CALLS = 2


@dataclass(frozen=True)
class Cascade:
    """How long each level of the timeout cascade lasts (seconds), for one run."""

    force_report_s: float
    report_timeout_s: float
    deadline_s: float  # the effective time budget: the run ends, always, this long after it starts
    agent_force_report_s: float
    agent_timeout_s: float
    agent_report_grace_s: float

    @classmethod
    def derive(cls, settings: Settings, budget_s: float) -> Cascade:
        """Every level not set explicitly in `settings` derives from `budget_s` in proportion."""
        scale = budget_s / REFERENCE_BUDGET_S
        force_report_s = _explicit(settings.force_report_s, REFERENCE_FORCE_REPORT_S * scale)
        report_timeout_s = _explicit(settings.report_timeout_s, REFERENCE_REPORT_TIMEOUT_S * scale)
        window = force_report_s / REFERENCE_FORCE_REPORT_S
        derived_deadline = (
            budget_s
            if settings.force_report_s is None and settings.report_timeout_s is None
            else force_report_s + report_timeout_s + REFERENCE_MARGIN_S * scale
        )
        return cls(
            force_report_s=force_report_s,
            report_timeout_s=report_timeout_s,
            deadline_s=_explicit(settings.deadline_s, derived_deadline),
            agent_force_report_s=_explicit(
                settings.agent_force_report_s, AGENT_FORCE_REPORT_SHARE * REFERENCE_FORCE_REPORT_S * window
            ),
            agent_timeout_s=_explicit(
                settings.agent_timeout_s, AGENT_TIMEOUT_SHARE * REFERENCE_FORCE_REPORT_S * window
            ),
            agent_report_grace_s=_explicit(
                settings.agent_report_grace_s, AGENT_REPORT_GRACE_SHARE * REFERENCE_FORCE_REPORT_S * window
            ),
        )


def _explicit(value: float | None, derived: float) -> float:
    return derived if value is None else value


class Pace:
    """How long this run's model calls take (on the run clock), to judge whether work still fits."""

    def __init__(self) -> None:
        self._fastest: float | None = None

    def add(self, seconds: float) -> None:
        seconds = max(0.0, seconds)
        self._fastest = seconds if self._fastest is None else min(self._fastest, seconds)

    @property
    def call_s(self) -> float:
        """The fastest model call so far (0 before the first one).

        The fastest, not the mean: a process's first calls pay one-off start-up costs, and a
        wrong guess in this direction only costs an agent that is force-reported, while a
        wrong guess in the other means no research at all.
        """
        return self._fastest or 0.0


@dataclass
class RunDeadlines:
    """The timeout cascade of one run: durations, and absolute times (on the run's clock) from `started_at`.

    `started_at` is the one field to move if time should not count against the budget (e.g. while
    the run waits for the user): every absolute time below follows it.
    """

    started_at: float
    cascade: Cascade

    @classmethod
    def start(cls, settings: Settings, now: float, budget_s: float | None = None) -> RunDeadlines:
        """Deadlines for a run starting `now`; `budget_s` unset means a heavy run's default budget."""
        return cls(started_at=now, cascade=Cascade.derive(settings, budget_s or settings.heavy_time_budget_s))

    @property
    def time_budget_s(self) -> float:
        return self.cascade.deadline_s

    @property
    def force_report_at(self) -> float:
        """No more orchestrator cycles; agents must be done."""
        return self.started_at + self.cascade.force_report_s

    @property
    def deadline_at(self) -> float:
        """The run ends, always."""
        return self.started_at + self.cascade.deadline_s

    @property
    def report_timeout_s(self) -> float:
        return self.cascade.report_timeout_s

    @property
    def agent_report_grace_s(self) -> float:
        return self.cascade.agent_report_grace_s

    def time_left(self, now: float) -> float:
        """Seconds of the budget left (until the run's hard deadline)."""
        return seconds_until(self.deadline_at, now)

    def research_time_left(self, now: float) -> float:
        """Seconds left for research (until the orchestrator's force report)."""
        return seconds_until(self.force_report_at, now)

    def agent_force_report_at(self, agent_started_at: float) -> float:
        """Agents stop researching early enough to report before the orchestrator's force report."""
        return min(
            agent_started_at + self.cascade.agent_force_report_s, self.force_report_at - self.agent_report_grace_s
        )

    def agent_first_turn_until(self, agent_started_at: float) -> float:
        """An agent's first research turn may run until it must report to beat its own kill.

        So no agent is force-reported before it has researched at all, unless not even that fits.
        """
        return max(
            self.agent_force_report_at(agent_started_at),
            self.agent_kill_at(agent_started_at) - self.agent_report_grace_s,
        )

    def agent_kill_at(self, agent_started_at: float) -> float:
        return min(agent_started_at + self.cascade.agent_timeout_s, self.force_report_at)

    def agents_fit(self, now: float, call_s: float) -> bool:
        """Whether agents dispatched `now` get a research turn and their report before the force report."""
        return now + self.agent_report_grace_s + AGENT_MIN_CALLS * call_s < self.force_report_at

    def cycle_fits(self, now: float, call_s: float) -> bool:
        """Whether another orchestrator turn and the agents it would dispatch still fit."""
        return self.agents_fit(now + call_s, call_s)

    def report_end_at(self, report_started_at: float) -> float:
        """The final report is cut at its own timeout, and always a second before the hard deadline."""
        return min(report_started_at + self.report_timeout_s, self.deadline_at - 1.0)


def seconds_until(at: float, now: float) -> float:
    """Seconds from `now` until `at`; zero once it has passed."""
    return max(0.0, at - now)


async def both(first: Awaitable[T], second: Awaitable[U]) -> tuple[T, U]:
    """Await two independent pieces of work at once and return both results.

    If either raises, the other is cancelled and awaited before the error propagates; a caller
    cancelled while it waits (the run's deadline) cancels both. Neither is ever left running.
    """
    a, b = asyncio.ensure_future(first), asyncio.ensure_future(second)
    try:
        await asyncio.wait({a, b}, return_when=asyncio.FIRST_EXCEPTION)
    finally:
        for task in (a, b):
            if not task.done():
                task.cancel()
        await asyncio.gather(a, b, return_exceptions=True)
    for task in (a, b):  # the failure, not the cancellation it caused in the other
        error = None if task.cancelled() else task.exception()
        if error is not None:
            raise error
    return a.result(), b.result()


async def wait_all_until(clock: Clock, at: float, tasks: Iterable[asyncio.Task[T]]) -> set[asyncio.Task[T]]:
    """Wait for all `tasks` or until `at`; cancel and await the stragglers, and return them.

    A caller cancelled while it waits (the run's deadline, a cancelled run) cancels the tasks too:
    they are not its children, and left running they would go on emitting after the run ended.
    """
    pending: set[asyncio.Task[T]] = set(tasks)
    if not pending:
        return set()
    timer = asyncio.ensure_future(clock.sleep(seconds_until(at, clock.now())))
    try:
        while pending and not timer.done():
            await asyncio.wait([*pending, timer], return_when=asyncio.FIRST_COMPLETED)
            pending = {task for task in pending if not task.done()}
    finally:
        timer.cancel()
        for task in pending:
            task.cancel()
        await asyncio.gather(timer, *pending, return_exceptions=True)
    return pending

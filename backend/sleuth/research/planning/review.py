"""Plan review: the run shows its plan and waits for the user to approve it, edit it or ask for a revision."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Protocol

from sleuth.core.clock import DeadlineReached, run_until
from sleuth.core.text import has_visible_text, strip_controls
from sleuth.research.planning.plan import PlanRevision, make_plan
from sleuth.research.state import RunState
from sleuth.research.time.waits import shift_deadlines
from sleuth.stream.packets import Degraded, Error, PlanReview, PlanReviewed

STEP_MAX_CHARS = 500


@dataclass(frozen=True)
class PlanAnswer:
    """One reply to a `plan_review`: exactly one of approve, steps or feedback is meant."""

    approve: bool = False
    steps: tuple[str, ...] | None = None
    feedback: str | None = None


class PlanReviewer(Protocol):
    """Whoever answers a run's plan reviews: the API's inbox, a terminal, or an automatic approval."""

    async def review(self, steps: list[str], round: int, max_rounds: int) -> PlanAnswer: ...


class AutoApprove:
    """For `--approve-plan`, and for a run nobody can answer: the plan is approved as it is."""

    async def review(self, steps: list[str], round: int, max_rounds: int) -> PlanAnswer:
        return PlanAnswer(approve=True)


class PlanInbox:
    """Answers delivered from outside the run (the engine process receives them from the server)."""

    def __init__(self) -> None:
        self._answers: asyncio.Queue[PlanAnswer] = asyncio.Queue()

    def deliver(self, answer: PlanAnswer) -> None:
        self._answers.put_nowait(answer)

    async def review(self, steps: list[str], round: int, max_rounds: int) -> PlanAnswer:
        return await self._answers.get()

    def drop_stale(self) -> None:
        """Answers that arrived while no review was open belong to no plan."""
        while not self._answers.empty():
            self._answers.get_nowait()


def clean_steps(steps: tuple[str, ...] | list[str], max_steps: int) -> list[str]:
    """Edited steps are used as given, cleaned as every label is (core/text.py), minus steps with
    nothing visible and beyond the plan's step limit. Every reviewer's edits pass here: the API's,
    the terminal's, a worker's."""
    kept = [" ".join(strip_controls(step).split())[:STEP_MAX_CHARS] for step in steps]
    return [step for step in kept if has_visible_text(step)][:max_steps]


async def _wait_for_answer(state: RunState, reviewer: PlanReviewer, round: int, max_rounds: int) -> PlanAnswer | None:
    """The reviewer's answer, or None at the review timeout; the wait is given back to the run's deadlines."""
    timeout = state.settings.plan_review_timeout_s
    started = state.clock.now()
    original = state.deadlines
    state.deadlines = shift_deadlines(original, timeout)  # paused: nothing may expire while the user reads
    try:
        return await run_until(state.clock, started + timeout, reviewer.review(list(state.plan), round, max_rounds))
    except DeadlineReached:
        return None
    finally:
        waited = max(0.0, state.clock.now() - started)
        state.deadlines = shift_deadlines(original, waited)


async def review_plan(state: RunState, reviewer: PlanReviewer) -> list[str]:
    """Emit `plan_review` and apply the answers until the plan is approved, edited or the review times out."""
    max_rounds = state.settings.plan_review_max_rounds
    round = 1
    while True:
        if isinstance(reviewer, PlanInbox):
            reviewer.drop_stale()
        state.emit(PlanReview(steps=list(state.plan), round=round, max_rounds=max_rounds))
        answer = await _wait_for_answer(state, reviewer, round, max_rounds)
        if answer is None:
            state.emit(
                Degraded(
                    level="plan_review_timeout",
                    detail="No answer to the plan review in time; researching the plan as it was proposed.",
                )
            )
            state.emit(PlanReviewed(outcome="timeout", steps=list(state.plan)))
            return state.plan
        edited = clean_steps(answer.steps, state.settings.plan_max_steps) if answer.steps is not None else []
        if edited:
            state.plan = edited
            state.emit(PlanReviewed(outcome="edited", steps=edited))
            return edited
        feedback = (answer.feedback or "").strip()
        if feedback and round < max_rounds:
            state.emit(PlanReviewed(outcome="revising", steps=list(state.plan)))
            await make_plan(state, PlanRevision(previous=list(state.plan), feedback=feedback))
            round += 1
            continue
        if feedback:
            state.emit(
                Error(
                    message=f"The plan was revised {max_rounds - 1} times, the limit; researching the current plan.",
                    recoverable=True,
                )
            )
        state.emit(PlanReviewed(outcome="approved", steps=list(state.plan)))
        return state.plan

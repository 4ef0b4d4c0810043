"""Stand-ins for the research engine and for where runs execute, for tests about what the server
does around them. The engines are module-level functions: the server sends its engine to the engine
process by reference."""

from __future__ import annotations

from sleuth.config import Settings
from sleuth.research.planning.review import PlanAnswer, PlanReviewer
from sleuth.runs.executor import RunEvents
from sleuth.stream.emitter import Emitter
from sleuth.stream.results import ResearchRequest, ResearchResult

FAILED_BEFORE_START = "the engine failed before it began"


async def failing_engine(
    request: ResearchRequest, settings: Settings, emitter: Emitter, *, reviewer: PlanReviewer | None = None
) -> ResearchResult:
    """Raises before it sends anything, as a bug in setting a run up would."""
    raise RuntimeError(FAILED_BEFORE_START)


class NoRuns:
    """Where runs execute (`RunManager(executor=...)`), taking none: a run handed over or a plan
    answer fails with `refusal`, as when the engine process is gone. Tests override what they need."""

    refusal = "no runs here"

    def __init__(self, events: RunEvents) -> None:
        self.events = events

    def start(self) -> None:
        pass

    def start_run(self, run_id: str, request: ResearchRequest) -> None:
        raise OSError(self.refusal)

    def answer_plan(self, run_id: str, answer: PlanAnswer) -> None:
        raise OSError(self.refusal)

    def cancel(self, run_id: str) -> None:
        pass

    def stop(self, timeout: float) -> None:
        pass

    def readiness(self) -> tuple[int, int]:
        return 0, 1

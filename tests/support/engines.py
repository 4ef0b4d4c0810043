"""Stand-ins for the research engine, for tests about what the server does around it. Module-level
functions: the server sends its engine to the engine process by reference."""

from __future__ import annotations

from sleuth.config import Settings
from sleuth.research.planning.review import PlanReviewer
from sleuth.stream.emitter import Emitter
from sleuth.stream.results import ResearchRequest, ResearchResult

FAILED_BEFORE_START = "the engine failed before it began"


async def failing_engine(
    request: ResearchRequest, settings: Settings, emitter: Emitter, *, reviewer: PlanReviewer | None = None
) -> ResearchResult:
    """Raises before it sends anything, as a bug in setting a run up would."""
    raise RuntimeError(FAILED_BEFORE_START)

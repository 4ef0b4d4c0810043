"""Types shared by the run manager and the engine processes (kept apart to avoid an import cycle)."""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any, Protocol

from sleuth.config import Settings
from sleuth.research.planning.review import PlanReviewer
from sleuth.stream.emitter import Emitter
from sleuth.stream.results import ResearchRequest, ResearchResult

DoneMessage = tuple[str, str | None, str | None, bool, str | None]  # run_id, result_json, error, cancelled, stop_reason


class Engine(Protocol):
    """The engine entry point's shape (`run_research`). It must be importable by reference (a
    module-level function): it is sent to the engine process. `reviewer` answers plan reviews."""

    def __call__(
        self, request: ResearchRequest, settings: Settings, emitter: Emitter, *, reviewer: PlanReviewer | None = None
    ) -> Coroutine[Any, Any, ResearchResult]: ...

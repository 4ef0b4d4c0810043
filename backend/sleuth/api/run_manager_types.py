"""Types shared by the run manager and the engine process (kept apart to avoid an import cycle)."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from sleuth.config import Settings
from sleuth.research.types import ResearchRequest, ResearchResult
from sleuth.stream.emitter import Emitter

# The engine entry point's shape: run_research(request, settings, emitter) -> ResearchResult.
# It must be importable by reference (a module-level function): it is sent to the engine process.
Engine = Callable[[ResearchRequest, Settings, Emitter], Coroutine[Any, Any, ResearchResult]]

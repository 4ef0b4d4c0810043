"""The server's model check comes from where runs execute (each engine loads litellm anyway), so the
API process never imports litellm itself."""

from __future__ import annotations

import threading

import pytest

from sleuth.config import Settings
from sleuth.core import heavy
from sleuth.research.run import run_research
from sleuth.runs.admission import ModelChecks
from sleuth.runs.executor import RunEvents
from sleuth.runs.manager import RunManager
from sleuth.runs.messages import Ready
from sleuth.store.store import Store
from support.engines import NoRuns

PROBLEM = "the model openai/x needs OPENAI_API_KEY (for a key, SLEUTH_API_KEY works too)"


class WarmsOnAThread(NoRuns):
    """Where runs execute: one engine that warms up on a thread of its own and says `Ready` with
    its model check, as an engine process's reader thread does."""

    def __init__(self, events: RunEvents) -> None:
        super().__init__(events)
        self.thread = threading.Thread(target=lambda: events.on_ready(Ready(model_problem=PROBLEM)))

    def start(self) -> None:
        self.thread.start()

    def stop(self, timeout: float) -> None:
        self.thread.join(timeout)

    def readiness(self) -> tuple[int, int]:
        return 1, 1


async def test_the_model_check_is_the_engines_and_loads_no_litellm_here(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*libraries: str, then: object = None) -> None:
        raise AssertionError(f"the server process preloaded {libraries}")

    monkeypatch.setattr(heavy, "preload", refuse)
    settings = Settings(mode="light")
    store = Store.from_settings(settings)
    manager = RunManager(settings, store, max_runs=1, engine=run_research, executor=WarmsOnAThread)
    checks = ModelChecks(manager.model_problem)
    try:
        await manager.start()
        checks.start()
        assert await checks.problem() == PROBLEM
        assert await checks.problem() == PROBLEM  # asked once, answered for every request
    finally:
        checks.stop()
        await manager.shutdown()
        store.close()

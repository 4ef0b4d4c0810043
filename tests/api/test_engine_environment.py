"""An engine process runs with the server's environment as it is when the engine starts, although
it is forked from a fork server that started earlier, with the environment of that moment."""

from __future__ import annotations

import queue
from pathlib import Path

import pytest

from sleuth.config import Settings
from sleuth.runs.engine_process import EngineProcess
from sleuth.runs.messages import Ready
from support.engines import failing_engine

READY_S = 120  # a fresh fork server imports litellm first: tens of seconds on a loaded machine


def _ready(settings: Settings) -> Ready:
    """The `Ready` of an engine process started now (its model check in it), then the engine stopped."""
    readies: queue.SimpleQueue[Ready] = queue.SimpleQueue()
    engine = EngineProcess(
        settings,
        failing_engine,
        on_packet=lambda _: None,
        on_done=lambda _: None,
        on_exit=lambda: None,
        on_ready=readies.put,
    )
    engine.start()
    try:
        return readies.get(timeout=READY_S)
    finally:
        engine.request_stop()
        engine.wait_stopped(30)


def test_a_key_set_after_the_fork_server_started_reaches_the_next_engine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = Settings(model="openai/gpt-4o-mini", data_dir=tmp_path, search="local")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    without = _ready(settings)  # the fork server is running from here on, if it was not before
    monkeypatch.setenv("OPENAI_API_KEY", "sk-set-later")
    with_key = _ready(settings)
    assert without.model_problem is not None and "OPENAI_API_KEY" in without.model_problem
    assert with_key.model_problem is None

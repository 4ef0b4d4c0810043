"""The CLI's event-loop runner: slow steps are reported when asked for, and only then."""

from __future__ import annotations

import logging
import time

import pytest

from sleuth.runs import local as event_loop


async def _blocking_step() -> str:
    time.sleep(0.05)  # a step that holds the loop, which is what is being detected
    return "done"


def test_slow_steps_are_logged_when_a_threshold_is_set(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="asyncio"):
        assert event_loop.run(_blocking_step(), slow_callback_ms=10) == "done"
    assert any("took" in r.getMessage() and "_blocking_step" in r.getMessage() for r in caplog.records)


def test_nothing_is_logged_without_a_threshold(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="asyncio"):
        assert event_loop.run(_blocking_step()) == "done"
    assert not [r for r in caplog.records if r.name == "asyncio"]

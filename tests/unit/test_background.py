"""Background loops stop when asked, even when the cancel meant to stop them is swallowed."""

from __future__ import annotations

import asyncio
import logging

import pytest

from sleuth.core.background import Periodic, stop_task

BOUND_S = 30.0  # only so that a broken loop fails the test instead of hanging it


async def test_a_step_that_swallows_its_cancel_still_ends_the_loop() -> None:
    entered = asyncio.Event()
    steps = 0

    async def step() -> None:
        # As a client library that retries a read cut by a cancel: the cancel is lost here.
        nonlocal steps
        steps += 1
        entered.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            pass

    loop = Periodic(step, 0.001, what="a test loop")
    loop.start()
    await asyncio.wait_for(entered.wait(), BOUND_S)
    await loop.stop(wait_s=BOUND_S)
    assert loop._task is not None and loop._task.done()
    assert steps == 1  # it did not go round again after losing its cancel


async def test_a_failing_step_is_logged_and_the_next_runs(caplog: pytest.LogCaptureFixture) -> None:
    calls = 0
    third = asyncio.Event()

    async def step() -> None:
        nonlocal calls
        calls += 1
        if calls == 3:
            third.set()
        if calls == 1:
            raise ConnectionError("redis away")

    loop = Periodic(step, 0.001, what="a flaky loop")
    with caplog.at_level(logging.ERROR, logger="sleuth.core.background"):
        loop.start()
        await asyncio.wait_for(third.wait(), BOUND_S)
        await loop.stop()
    assert [r.getMessage() for r in caplog.records] == ["a flaky loop failed; trying again in 0.001 s"]


async def test_stop_waits_for_no_step_when_idle() -> None:
    ran = False

    async def step() -> None:
        nonlocal ran
        ran = True

    loop = Periodic(step, 3600.0, what="an idle loop")
    loop.start()
    await asyncio.sleep(0)  # the loop is now waiting out its first interval
    await asyncio.wait_for(loop.stop(), BOUND_S)  # the interval is not waited out
    assert not ran


async def test_a_task_that_never_ends_is_left_behind_not_awaited(caplog: pytest.LogCaptureFixture) -> None:
    release = asyncio.Event()

    async def stubborn() -> None:
        while not release.is_set():
            try:
                await release.wait()
            except asyncio.CancelledError:
                pass

    task = asyncio.create_task(stubborn())
    await asyncio.sleep(0)
    with caplog.at_level(logging.ERROR, logger="sleuth.core.background"):
        await stop_task(task, "a stubborn task", wait_s=0.01)
    assert not task.done()
    assert "a stubborn task did not stop within 0.01 s of being cancelled; left behind" in caplog.text
    release.set()
    await asyncio.wait_for(task, BOUND_S)


async def test_a_task_that_had_failed_is_reported(caplog: pytest.LogCaptureFixture) -> None:
    async def broken() -> None:
        raise RuntimeError("boom")

    task = asyncio.create_task(broken())
    await asyncio.wait([task])
    with caplog.at_level(logging.ERROR, logger="sleuth.core.background"):
        await stop_task(task, "a broken task")
    assert "a broken task had failed: boom" in caplog.text

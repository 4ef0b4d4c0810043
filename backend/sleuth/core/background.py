"""Background loops that stop when asked, even when the cancel meant to stop them is lost.

A cancel delivered while a task waits inside a library call can be swallowed there (a client
library that retries the interrupted read, or `asyncio.wait_for` in Python 3.11 when the inner
call finishes at the same moment); a loop that loses its one cancel then runs for ever, and a
shutdown that awaits it hangs. So a loop here also checks a stop flag between its steps, and
stopping it never waits without a bound.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

log = logging.getLogger(__name__)

STOP_WAIT_S = 5.0  # for a cancelled task to end before it is left behind (and logged)


async def stop_task(task: asyncio.Task[Any] | None, what: str, wait_s: float = STOP_WAIT_S) -> None:
    """Cancel `task` and wait for it, at most `wait_s`; a task still running then is logged and
    left to end by itself (its loop sees its stop flag, or its connection is closed next)."""
    if task is None:
        return
    if not task.done():
        task.cancel()
        await asyncio.wait([task], timeout=wait_s)
    if not task.done():
        log.error("%s did not stop within %g s of being cancelled; left behind", what, wait_s)
        return
    if not task.cancelled() and (exc := task.exception()) is not None:
        log.error("%s had failed: %s", what, exc, exc_info=exc)


class Periodic:
    """Runs `step` every `every_s` seconds (the first time after one interval) until stopped. A
    step that raises is logged and the next one runs on time: the services it talks to (Redis, the
    database) may be briefly away."""

    def __init__(self, step: Callable[[], Awaitable[object]], every_s: float, *, what: str) -> None:
        self._step = step
        self._every_s = every_s
        self._what = what
        self._stopping = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._loop(), name=self._what)

    async def stop(self, wait_s: float = STOP_WAIT_S) -> None:
        self._stopping.set()
        await stop_task(self._task, self._what, wait_s)

    async def _loop(self) -> None:
        while not self._stopping.is_set():
            try:
                async with asyncio.timeout(self._every_s):
                    await self._stopping.wait()
            except TimeoutError:
                pass
            if self._stopping.is_set():
                return
            try:
                await self._step()
            except Exception:
                log.exception("%s failed; trying again in %g s", self._what, self._every_s)

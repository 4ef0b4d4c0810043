"""Injectable time: every deadline and backoff in Sleuth reads time through a `Clock`."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Protocol, TypeVar

T = TypeVar("T")


class Clock(Protocol):
    def now(self) -> float:
        """Seconds on a monotonic scale."""
        ...

    async def sleep(self, seconds: float) -> None: ...


class DeadlineReached(Exception):
    """The awaited work did not finish before its deadline and was cancelled."""


class SystemClock:
    """Real monotonic time."""

    def now(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds))


class ScaledClock:
    """Time that runs `factor` times faster than real time.

    With factor=1000 a 30-minute setting lasts 1.8 real seconds, so tests exercise the real
    timeout cascade (default settings, real sockets, real cancellation) in milliseconds.

    `pause()` and `resume()` (from any thread) stop it meanwhile: a scripted model pauses it while
    it answers, so a test's budget is spent by the engine and by what hangs, not by how long a
    loaded machine takes to serve a canned reply (at 180x, 100 real ms would be 18 scaled s).
    """

    def __init__(self, factor: float) -> None:
        if factor <= 0:
            raise ValueError("factor must be positive")
        self.factor = factor
        self._origin = time.monotonic()
        self._lock = threading.Lock()
        self._pauses = 0
        self._paused_since = 0.0
        self._paused_s = 0.0  # real seconds paused, excluding a pause under way

    def now(self) -> float:
        with self._lock:
            at = self._paused_since if self._pauses else time.monotonic()
            return (at - self._origin - self._paused_s) * self.factor

    def pause(self) -> None:
        with self._lock:
            if self._pauses == 0:
                self._paused_since = time.monotonic()
            self._pauses += 1

    def resume(self) -> None:
        with self._lock:
            self._pauses -= 1
            if self._pauses == 0:
                self._paused_s += time.monotonic() - self._paused_since

    async def sleep(self, seconds: float) -> None:
        until = self.now() + max(0.0, seconds)
        # Woken early by a pause: sleep again for what is left, as often as it takes.
        while (left := until - self.now()) > 0:
            await asyncio.sleep(max(left / self.factor, PAUSED_POLL_S if self._pauses else 0.0))


PAUSED_POLL_S = 0.005  # how often a sleeper looks whether a pause has ended


async def _sleep_until(clock: Clock, at: Callable[[], float]) -> None:
    # `at` is read again on waking: a deadline that moved later (time that does not count) is honoured.
    while (remaining := at() - clock.now()) > 0:
        await clock.sleep(remaining)


async def run_until(clock: Clock, at: float | Callable[[], float], work: Awaitable[T]) -> T:
    """Await `work`, cancelling it and raising DeadlineReached if `at` passes first.

    `at` may be a function, read again whenever the wait wakes, for a deadline that can move.
    """
    when: Callable[[], float] = at if callable(at) else (lambda: at)
    task = asyncio.ensure_future(work)
    if clock.now() >= when():
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        raise DeadlineReached
    timer = asyncio.ensure_future(_sleep_until(clock, when))
    try:
        await asyncio.wait({task, timer}, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        task.cancel()
        timer.cancel()
        await asyncio.gather(task, timer, return_exceptions=True)
        raise
    if task.done():
        timer.cancel()
        await asyncio.gather(timer, return_exceptions=True)
        return task.result()
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    raise DeadlineReached


@asynccontextmanager
async def clock_timeout(clock: Clock, seconds: float) -> AsyncIterator[None]:
    """`asyncio.timeout(seconds)` on `clock`: the block, in this task, is cancelled and TimeoutError
    raised once `seconds` of the clock's time have passed. For work that must be entered and left in
    one task (a task group, a connection's context), where `run_until` cannot move it to a task of its own."""
    async with asyncio.timeout(None) as scope:

        async def expire() -> None:
            await clock.sleep(seconds)
            scope.reschedule(asyncio.get_running_loop().time())

        watchdog = asyncio.ensure_future(expire())
        try:
            yield
        finally:
            watchdog.cancel()

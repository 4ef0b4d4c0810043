"""Injectable time: every deadline and backoff in Sleuth reads time through a `Clock`."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Protocol


class Clock(Protocol):
    def now(self) -> float:
        """Seconds on a monotonic scale."""
        ...

    async def sleep(self, seconds: float) -> None: ...


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

"""How late the event loop ran while a block of a test ran: the allowance a scaled-clock bound needs.

On a `ScaledClock(1000)` one real millisecond is a scaled second, so a deadline that fires on time
can still be stamped late by however long the process waited for a core (a loaded machine) or the
loop was busy. A bound such as "the level fires within 100 scaled seconds of its setting" then
measures the machine, not the engine. `LoopLag` measures that lateness on the same loop: a probe
timer that is always pending, so any stretch in which the loop could not wake a timer shows up as
a late wake of the probe. A test adds `lag.allowance(clock)` to its upper bounds: an engine bug
(a level fired late, a stop that waits) still fails, unless the loop itself was that late.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from types import TracebackType

from sleuth.core.clock import ScaledClock

PERIOD_S = 0.005


class LoopLag:
    """`async with LoopLag() as lag:` ... then `lag.late_s`: the latest any probe wake came (real s)."""

    def __init__(self) -> None:
        self.late_s = 0.0
        self._probe: asyncio.Task[None] | None = None

    async def _run(self) -> None:
        while True:
            asked = time.monotonic()
            await asyncio.sleep(PERIOD_S)
            self.late_s = max(self.late_s, time.monotonic() - asked - PERIOD_S)

    async def __aenter__(self) -> LoopLag:
        self._probe = asyncio.create_task(self._run())
        await asyncio.sleep(0)  # the probe's first timer is pending before the block starts
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        assert self._probe is not None
        self._probe.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._probe

    def allowance(self, clock: ScaledClock, stretches: int = 2) -> float:
        """Scaled seconds a stamp may be late by: `stretches` late wakes (each at most the latest
        seen plus one probe period, since a stretch can start just after a probe woke). Two by
        default: the start a bound measures from, and the event it measures, can each be late."""
        return stretches * (self.late_s + PERIOD_S) * clock.factor

import asyncio

import pytest

from sleuth.clock import ScaledClock
from sleuth.config import Settings
from sleuth.research.deadlines import DeadlineReached, RunDeadlines, run_until, wait_all_until


class ManualClock:
    """Time moves only when the test says so; sleepers wake when it passes their time."""

    def __init__(self) -> None:
        self.t = 0.0
        self._sleepers: list[tuple[float, asyncio.Future[None]]] = []

    def now(self) -> float:
        return self.t

    async def sleep(self, seconds: float) -> None:
        future = asyncio.get_running_loop().create_future()
        self._sleepers.append((self.t + seconds, future))
        await future

    async def advance(self, seconds: float) -> None:
        await settle()  # let every task that is about to sleep register first
        self.t += seconds
        for at, future in list(self._sleepers):
            if at <= self.t and not future.done():
                future.set_result(None)
        await settle()


async def settle() -> None:
    """Run the event loop until every ready task has had its turn (no time passes)."""
    for _ in range(10):
        await asyncio.sleep(0)


def test_cascade_defaults_follow_the_contract() -> None:
    d = RunDeadlines.start(Settings(), now=100.0)
    assert d.force_report_at == 100 + 1800 and d.deadline_at == 100 + 1800 + 300 + 10
    assert d.agent_force_report_at(100.0) == 100 + 720 and d.agent_kill_at(100.0) == 100 + 1800
    # an agent started late is told to report before the orchestrator's force report
    assert d.agent_force_report_at(100 + 1700) == 100 + 1800 - 60
    assert d.report_end_at(100 + 2005) == d.deadline_at - 1


async def test_run_until_cancels_the_work_at_the_deadline() -> None:
    clock = ManualClock()
    cancelled = asyncio.Event()

    async def work() -> str:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "never"

    waiter = asyncio.create_task(run_until(clock, 10.0, work()))
    await clock.advance(9.9)
    assert not waiter.done()
    await clock.advance(0.2)
    with pytest.raises(DeadlineReached):
        await waiter
    assert cancelled.is_set()


async def test_run_until_returns_the_result_in_time() -> None:
    async def work() -> int:
        return 7

    assert await run_until(ManualClock(), 5.0, work()) == 7


async def test_wait_all_until_returns_and_cancels_the_stragglers() -> None:
    clock = ManualClock()
    fast = asyncio.create_task(asyncio.sleep(0, result="ok"))
    slow = asyncio.create_task(asyncio.Event().wait())
    waiter = asyncio.create_task(wait_all_until(clock, 3.0, [fast, slow]))
    await asyncio.sleep(0)
    await clock.advance(3.0)
    pending = await waiter
    assert pending == {slow} and slow.cancelled() and fast.result() == "ok"


async def test_scaled_clock_runs_faster_than_real_time() -> None:
    clock = ScaledClock(1000)
    start = clock.now()
    await clock.sleep(50)  # 50 ms of real time
    assert clock.now() - start >= 50

import asyncio

import pytest

from sleuth.config import Settings
from sleuth.core.clock import DeadlineReached, ScaledClock, run_until
from sleuth.research.time.deadlines import RunDeadlines, both, wait_all_until
from sleuth_testkit.clock import ManualClock


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


async def test_both_runs_the_two_at_once_and_returns_both_results() -> None:
    first_started, second_started = asyncio.Event(), asyncio.Event()

    async def first() -> str:
        first_started.set()
        await second_started.wait()  # would never return if `second` only started after `first` ended
        return "a"

    async def second() -> int:
        second_started.set()
        await first_started.wait()
        return 2

    assert await both(first(), second()) == ("a", 2)


async def test_both_cancels_the_other_when_one_fails() -> None:
    never = asyncio.Event()
    cancelled = asyncio.Event()

    async def waits() -> None:
        try:
            await never.wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise

    async def fails() -> None:
        raise ValueError("broken")

    with pytest.raises(ValueError, match="broken"):
        await both(waits(), fails())
    assert cancelled.is_set()


async def test_a_cancelled_caller_of_both_cancels_both() -> None:
    never = asyncio.Event()
    started: list[str] = []
    cancelled: list[str] = []

    async def waits(name: str) -> None:
        started.append(name)
        try:
            await never.wait()
        except asyncio.CancelledError:
            cancelled.append(name)
            raise

    caller = asyncio.ensure_future(both(waits("a"), waits("b")))
    while len(started) < 2:
        await asyncio.sleep(0)
    caller.cancel()
    with pytest.raises(asyncio.CancelledError):
        await caller
    assert sorted(cancelled) == ["a", "b"]


async def test_scaled_clock_runs_faster_than_real_time() -> None:
    clock = ScaledClock(1000)
    start = clock.now()
    await clock.sleep(50)  # 50 ms of real time
    assert clock.now() - start >= 50


async def test_a_paused_scaled_clock_stands_still_and_its_sleepers_wait_out_the_pause() -> None:
    clock = ScaledClock(1000)
    clock.pause()
    paused_at = clock.now()
    woke = asyncio.Event()

    async def sleeper() -> None:
        await clock.sleep(20)  # 20 ms of unpaused real time
        woke.set()

    task = asyncio.create_task(sleeper())
    # Paused: however long the sleeper's own timers run, scaled time does not pass and it sleeps on.
    for _ in range(3):
        await asyncio.sleep(0.03)
        assert clock.now() == paused_at and not woke.is_set()
    clock.resume()
    await asyncio.wait_for(task, 30)
    assert clock.now() - paused_at >= 20


@pytest.mark.parametrize("budget", [15.0, 60.0, 120.0, 1800.0])
def test_every_level_scales_with_the_budget(budget: float) -> None:
    d = RunDeadlines.start(Settings(), now=0.0, budget_s=budget)
    assert d.time_budget_s == budget and d.deadline_at == budget
    scale = budget / 2110
    assert d.force_report_at == pytest.approx(1800 * scale)
    assert d.report_timeout_s == pytest.approx(300 * scale)
    assert d.agent_report_grace_s == pytest.approx(60 * scale)
    assert d.agent_force_report_at(0.0) == pytest.approx(720 * scale)
    assert d.agent_kill_at(0.0) == pytest.approx(1800 * scale)


def test_the_heavy_default_budget_is_the_documented_cascade_and_light_is_shorter() -> None:
    settings = Settings()
    heavy = RunDeadlines.start(settings, 0.0, settings.time_budget_for("heavy"))
    light = RunDeadlines.start(settings, 0.0, settings.time_budget_for("light"))
    assert (heavy.force_report_at, heavy.report_timeout_s, heavy.deadline_at) == (1800, 300, 2110)
    assert light.deadline_at < heavy.deadline_at / 2


def test_explicit_settings_win_over_the_budget() -> None:
    settings = Settings(force_report_s=15, report_timeout_s=40)
    d = RunDeadlines.start(settings, 0.0, budget_s=600)
    assert d.force_report_at == 15 and d.report_timeout_s == 40
    assert d.deadline_at == pytest.approx(15 + 40 + 10 * 600 / 2110)  # force report + report + margin
    # agent levels are shares of the research window, so a short window leaves room to research
    assert d.agent_report_grace_s == pytest.approx(0.5)
    assert d.agent_force_report_at(2.0) == pytest.approx(8.0)
    assert RunDeadlines.start(Settings(deadline_s=99, agent_report_grace_s=7), 0.0, 600).deadline_at == 99
    assert RunDeadlines.start(Settings(agent_report_grace_s=7), 0.0, 600).agent_report_grace_s == 7


@pytest.mark.parametrize("force_report_s", [15.0, 60.0, 61.0, 62.0])
def test_an_agent_always_gets_a_first_research_turn_when_the_window_allows(force_report_s: float) -> None:
    d = RunDeadlines.start(Settings(force_report_s=force_report_s), 0.0)
    started = force_report_s * 0.9  # a late agent: most of the window is gone
    assert d.agent_force_report_at(started) > started or d.agent_first_turn_until(started) > started
    assert d.agent_first_turn_until(started) == pytest.approx(force_report_s - d.agent_report_grace_s)
    # no room at all: not even a first turn
    assert d.agent_first_turn_until(force_report_s) < force_report_s


def test_agents_are_dispatched_only_when_they_can_research_and_report() -> None:
    d = RunDeadlines.start(Settings(), 0.0, budget_s=211)  # force report at 180 s, grace 6 s
    assert d.agents_fit(now=100, call_s=10)
    assert not d.agents_fit(now=160, call_s=10)  # 160 + 6 + 2 x 10 > 180
    assert d.cycle_fits(now=100, call_s=10) and not d.cycle_fits(now=155, call_s=10)


def test_time_left_counts_down_from_a_movable_start() -> None:
    d = RunDeadlines.start(Settings(), 100.0, budget_s=60)
    assert d.time_left(130.0) == 30 and d.research_time_left(130.0) == pytest.approx(60 * 1800 / 2110 - 30)
    d.started_at += 20  # time that does not count (e.g. waiting for the user) moves every level
    assert d.time_left(130.0) == 50 and d.time_left(1000.0) == 0


async def test_run_until_follows_a_deadline_that_moves_later() -> None:
    clock = ManualClock()
    at = [10.0]

    async def work() -> str:
        await clock.sleep(15)
        return "done"

    waiter = asyncio.create_task(run_until(clock, lambda: at[0], work()))
    await clock.advance(5)
    at[0] = 20.0
    await clock.advance(6)  # past the old deadline: still running
    assert not waiter.done()
    await clock.advance(5)
    assert await waiter == "done"

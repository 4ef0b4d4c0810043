"""The virtual clock moves only when nothing but time can move a run on, and then to the next sleeper."""

from __future__ import annotations

import asyncio
import time

import anyio.to_thread

from sleuth_testkit.clock import VirtualClock


async def test_time_jumps_from_sleeper_to_sleeper_in_no_real_time() -> None:
    woke: list[tuple[str, float]] = []
    async with VirtualClock() as clock:

        async def sleeper(name: str, seconds: float) -> None:
            await clock.sleep(seconds)
            woke.append((name, clock.now()))

        started = time.monotonic()
        await asyncio.gather(sleeper("late", 3600), sleeper("early", 720), sleeper("also early", 720))
        real = time.monotonic() - started
    assert woke == [("early", 720), ("also early", 720), ("late", 3600)]
    assert real < 30  # an hour of run time; bounded only by a loaded machine's scheduling


async def test_a_cancelled_sleeper_no_longer_holds_a_wake_up() -> None:
    async with VirtualClock() as clock:
        early = asyncio.create_task(clock.sleep(10))
        await asyncio.sleep(0)
        early.cancel()
        await clock.sleep(50)
        assert clock.now() == 50


async def test_time_stands_still_while_a_thread_works_for_the_loop() -> None:
    async with VirtualClock() as clock:
        deadline = asyncio.create_task(clock.sleep(1800))
        await asyncio.to_thread(time.sleep, 0.2)  # a search on the loop's executor
        after_executor = clock.now()
        await anyio.to_thread.run_sync(time.sleep, 0.2)  # what litellm offloads to anyio's workers
        after_anyio = clock.now()
        await deadline
    assert after_executor == after_anyio == 0
    assert clock.now() == 1800


async def test_a_paused_clock_holds_its_sleepers_until_resumed() -> None:
    async with VirtualClock() as clock:
        clock.pause()  # the scripted model is answering
        sleeper = asyncio.create_task(clock.sleep(300))
        await asyncio.sleep(0.1)
        assert not sleeper.done() and clock.now() == 0
        clock.resume()
        await sleeper
        assert clock.now() == 300

"""`heavy.ready`: a library loading on the preload thread is awaited without blocking the event loop,
and a loop that closes meanwhile does not wait for it."""

from __future__ import annotations

import asyncio
import threading

from sleuth.core import heavy

BOUND_S = 60.0  # only so that a broken wait fails the test instead of hanging it


async def test_ready_waits_for_the_preload_under_way_while_the_loop_keeps_running() -> None:
    release = threading.Event()
    heavy.preload("jsonschema", then=lambda: release.wait(BOUND_S))  # holds jsonschema until released
    try:
        waiting = asyncio.create_task(heavy.ready("jsonschema"))
        for _ in range(20):  # the loop runs other work meanwhile
            await asyncio.sleep(0)
        assert not waiting.done()
    finally:
        release.set()
    await asyncio.wait_for(waiting, BOUND_S)
    assert heavy.Draft202012Validator.__name__ == "Draft202012Validator"


def test_a_closing_loop_does_not_wait_for_a_load_under_way() -> None:
    release = threading.Event()
    started = threading.Event()

    def blocked() -> None:
        started.set()
        release.wait(BOUND_S)

    async def main() -> None:
        heavy.preload("jsonschema", then=blocked)
        waiting = asyncio.create_task(heavy.ready("jsonschema"))
        await asyncio.to_thread(started.wait, BOUND_S)
        waiting.cancel()  # a server's shutdown: the task goes, the preload thread goes on

    # Were the wait on the loop's default executor, asyncio.run would join the blocked thread here
    # and not return. It runs in a thread of its own so that such a failure is a failed assertion.
    runner = threading.Thread(target=asyncio.run, args=(main(),), daemon=True)
    runner.start()
    runner.join(BOUND_S)
    finished = not runner.is_alive()
    still_blocked = not release.is_set()
    release.set()
    assert finished and still_blocked

"""`in_daemon_thread`: awaited like `asyncio.to_thread`, but a closing loop does not wait for it."""

from __future__ import annotations

import asyncio
import threading

import pytest

from sleuth.llm.setup import in_daemon_thread


async def test_it_returns_the_result_and_raises_the_error() -> None:
    assert await in_daemon_thread(lambda: threading.current_thread().daemon) is True

    def fail() -> None:
        raise KeyError("missing")

    with pytest.raises(KeyError, match="missing"):
        await in_daemon_thread(fail)


def test_a_closing_loop_does_not_wait_for_it() -> None:
    release = threading.Event()
    started = threading.Event()

    def blocked() -> None:
        started.set()
        release.wait()

    async def main() -> None:
        waiting = asyncio.create_task(in_daemon_thread(blocked))
        await asyncio.to_thread(started.wait)
        waiting.cancel()  # a server's shutdown: the task goes, the thread still runs

    # With asyncio.to_thread, asyncio.run would join the blocked thread here and never return. It
    # runs in a thread of its own so that such a failure is a failed assertion, not a hung suite.
    runner = threading.Thread(target=asyncio.run, args=(main(),), daemon=True)
    runner.start()
    runner.join(60)
    finished = not runner.is_alive()
    still_blocked = not release.is_set()
    release.set()
    assert finished and still_blocked

"""Running a CLI command's coroutine: `asyncio.run`, with slow-step logging when asked for."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run(main: Coroutine[Any, Any, T], slow_callback_ms: float | None = None) -> T:
    """Run `main` on a new event loop.

    With `slow_callback_ms`, asyncio's debug mode logs every callback that holds the loop that long
    (a "Executing ... took N seconds" warning on stderr): a step that long stalls every lane of the run.
    """
    if slow_callback_ms is None:
        return asyncio.run(main)
    with asyncio.Runner(debug=True) as runner:
        runner.get_loop().slow_callback_duration = slow_callback_ms / 1000
        return runner.run(main)

"""A clock for synchronous code under test: time moves only when the test moves it."""

from __future__ import annotations


class StepClock:
    """`now()` is `t`, which the test (or a stand-in it injects) advances; nothing may sleep on it."""

    def __init__(self) -> None:
        self.t = 100.0

    def now(self) -> float:
        return self.t

    async def sleep(self, seconds: float) -> None:
        raise AssertionError("nothing measured on a StepClock sleeps")

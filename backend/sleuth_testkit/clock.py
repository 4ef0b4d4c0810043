"""Clocks for tests: `ManualClock`, whose time moves only when the test says so, and `VirtualClock`,
whose time passes only when nothing but time can move the run on.

`ManualClock` suits work the loop cannot see (a subprocess starting or answering): a deadline fires
when the test advances past it, and not before, however long the real work takes.

`VirtualClock` is a `Clock` for a run on this event loop (`run_engine(..., clock=clock)`) against a
`ScriptedLLM` served on the same loop (`async with ScriptedLLM(model, pauses=clock)`). Its time
stands still while anything can still happen without time passing:

- a callback is ready on the loop (the engine computing, a socket with bytes to read: the model's
  replies and the engine's requests cross loopback sockets of this very loop, so a byte in flight
  is a ready socket, never a quiet one);
- work is out on a thread that will hand its result to the loop: the loop's executor (a search,
  a page read: `asyncio.to_thread`), which the clock counts by installing its own default executor,
  and anyio's worker threads (litellm builds a streamed reply on one);
- the preload thread is importing or warming a library (`heavy.busy()`): a run awaits it with
  `heavy.ready`, from a thread no executor counts;
- a timer of the loop is due within `NEAR_TIMER_S` of real time: a library waits a moment of
  real time (anyio's cancel scope around a read of litellm's stream polls so), and what it waits
  for comes after it; timers further off (keep-alive, read timeouts) do not hold the clock;
- the scripted model is answering (it pauses the clock as it pauses a `ScaledClock`; a hanging
  reply resumes it, since a hang is what waits for time).

Once none is, the clock jumps to the earliest `sleep` due and wakes it. A deadline then costs no
real time, and every stamp is exact: a level of the timeout cascade fires at its setting, and work
takes no run time at all.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from types import TracebackType
from typing import Any, ParamSpec, TypeVar

from anyio._backends._asyncio import WorkerThread

from sleuth.core import heavy

P = ParamSpec("P")
T = TypeVar("T")

# Loop iterations in a row that must find nothing to do before time moves: a byte written to a
# loopback socket in one iteration is seen as readable by the select of the next.
QUIET_ITERATIONS = 3
BUSY_POLL_S = 0.001  # while threads work or the model answers, how often the clock looks again
NEAR_TIMER_S = 0.5


class CountingExecutor(ThreadPoolExecutor):
    """The loop's default executor, counting the calls it has not finished."""

    def __init__(self) -> None:
        super().__init__(thread_name_prefix="virtual-clock")
        self._lock = threading.Lock()
        self._running = 0

    @property
    def idle(self) -> bool:
        with self._lock:
            return self._running == 0

    def submit(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        """The caller's future settles before the count drops: by then the loop has the result's
        callback queued (asyncio's own done-callback on it), so the clock never sees a gap in which
        neither the thread nor the loop has anything to do."""
        outer: Future[T] = Future()
        with self._lock:
            self._running += 1
        try:
            inner = super().submit(fn, *args, **kwargs)
        except BaseException:
            self._finished()
            raise
        inner.add_done_callback(lambda done: self._settle(done, outer))
        return outer

    def _settle(self, done: Future[T], outer: Future[T]) -> None:
        try:
            if done.cancelled():
                outer.cancel()
            elif (error := done.exception()) is not None:
                outer.set_exception(error)
            else:
                outer.set_result(done.result())
        finally:
            self._finished()

    def _finished(self) -> None:
        with self._lock:
            self._running -= 1


class VirtualClock:
    """`async with VirtualClock() as clock:` in the loop the run uses (see the module's docstring)."""

    def __init__(self, start: float = 0.0) -> None:
        self._now = start
        self._sleepers: list[tuple[float, int, asyncio.Future[None]]] = []
        self._order = itertools.count()  # equal wake times wake in the order they slept
        self._pauses = 0
        self._pause_lock = threading.Lock()
        self._executor = CountingExecutor()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._advancing: asyncio.Task[None] | None = None

    async def __aenter__(self) -> VirtualClock:
        self._loop = asyncio.get_running_loop()
        self._loop.set_default_executor(self._executor)
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._advancing is not None:
            self._advancing.cancel()
            await asyncio.gather(self._advancing, return_exceptions=True)
        self._executor.shutdown(wait=True)

    # -- Clock ------------------------------------------------------------------------------

    def now(self) -> float:
        return self._now

    async def sleep(self, seconds: float) -> None:
        if seconds <= 0:
            await asyncio.sleep(0)
            return
        loop = self._running_loop()
        woken: asyncio.Future[None] = loop.create_future()
        heapq.heappush(self._sleepers, (self._now + seconds, next(self._order), woken))
        if self._advancing is None or self._advancing.done():
            self._advancing = loop.create_task(self._advance(), name="virtual-clock")
        await woken

    # -- what ScriptedLLM calls while it answers ----------------------------------------------

    def pause(self) -> None:
        with self._pause_lock:
            self._pauses += 1

    def resume(self) -> None:
        with self._pause_lock:
            self._pauses -= 1

    # -- internals --------------------------------------------------------------------------

    def _running_loop(self) -> asyncio.AbstractEventLoop:
        loop = asyncio.get_running_loop()
        if loop is not self._loop:
            raise RuntimeError("a VirtualClock runs on the loop it was entered in (`async with VirtualClock()`)")
        return loop

    async def _advance(self) -> None:
        while self._drop_cancelled():
            await self._quiet()
            if not self._drop_cancelled():
                return
            self._now = max(self._now, self._sleepers[0][0])
            while self._sleepers and self._sleepers[0][0] <= self._now:
                _, _, woken = heapq.heappop(self._sleepers)
                if not woken.done():
                    woken.set_result(None)

    def _drop_cancelled(self) -> bool:
        """Whether anyone still sleeps (a cancelled sleeper no longer counts)."""
        while self._sleepers and self._sleepers[0][2].done():
            heapq.heappop(self._sleepers)
        return bool(self._sleepers)

    async def _quiet(self) -> None:
        """Return once the loop has had nothing to do for `QUIET_ITERATIONS` iterations in a row,
        with no executor work out and the model not answering."""
        quiet = 0
        while quiet < QUIET_ITERATIONS:
            loop = self._running_loop()
            if not self._executor.idle or _anyio_workers_busy() or heavy.busy() or self._paused() or _near_timer(loop):
                quiet = 0
                await asyncio.sleep(BUSY_POLL_S)
                continue
            await asyncio.sleep(0)  # one iteration: what became ready (I/O, a due timer) is queued before us
            quiet = quiet + 1 if not _ready_callbacks(loop) else 0

    def _paused(self) -> bool:
        with self._pause_lock:
            return self._pauses > 0


def _ready_callbacks(loop: asyncio.AbstractEventLoop) -> int:
    """Callbacks the loop will run before it next waits. asyncio has no public way to ask; CPython's
    base event loop keeps them in `_ready` (since 3.4)."""
    ready: Any = getattr(loop, "_ready")  # noqa: B009 - a private attribute, named once, here
    return len(ready)


def _near_timer(loop: asyncio.AbstractEventLoop) -> bool:
    """Whether a timer of the loop (`call_later`, a real `asyncio.sleep`) is due within `NEAR_TIMER_S`.
    CPython's base event loop keeps them in the heap `_scheduled` (since 3.4)."""
    scheduled: Any = getattr(loop, "_scheduled")  # noqa: B009 - a private attribute, named once, here
    now = loop.time()
    return any(not handle.cancelled() and handle.when() - now <= NEAR_TIMER_S for handle in scheduled)


def _anyio_workers_busy() -> bool:
    """Whether one of anyio's worker threads holds a call. Each reports its result to the loop before
    it marks the call done (`task_done`), so a busy worker turns into a ready callback without a gap."""
    return any(isinstance(thread, WorkerThread) and thread.queue.unfinished_tasks for thread in threading.enumerate())


class ManualClock:
    """Time moves only when the test says so (`await clock.advance(s)`); sleepers wake when it passes their time."""

    def __init__(self) -> None:
        self.t = 0.0
        self._sleepers: list[tuple[float, asyncio.Future[None]]] = []
        self._slept: asyncio.Event | None = None  # set whenever someone starts sleeping

    def now(self) -> float:
        return self.t

    async def sleep(self, seconds: float) -> None:
        future = asyncio.get_running_loop().create_future()
        self._sleepers.append((self.t + seconds, future))
        if self._slept is not None:
            self._slept.set()
        await future

    async def sleeping(self, count: int = 1) -> None:
        """Until `count` sleepers wait: deadlines armed by work that first waits for something real
        (a library import, a subprocess), which `advance` would otherwise move past."""
        self._slept = self._slept or asyncio.Event()
        while sum(1 for _, future in self._sleepers if not future.done()) < count:
            self._slept.clear()
            await self._slept.wait()

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

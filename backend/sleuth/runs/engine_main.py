"""The engine process: runs research runs on its own event loop and streams packets back.

Started by `EngineProcess` (forked from the fork server of `runs/engine_preload.py`), or on a thread of
the server's process by `EngineThread` (`SLEUTH_ENGINE_PROCESSES=0`: the same worker and messages,
without the process-level tuning). It warms up first (litellm and its tool path, the search tools),
checks the configured models (the server asks this of its engines, not of a litellm of its own),
says `Ready` with the answer, then receives `Command`s on a pipe and answers with `Reply`s (both in
`runs/messages.py`): a `StoredPacket` per packet, `RunDone` per run.

Runs started during the warm-up wait for it; a cancel reaches them at once. Packets are serialised
here, once; the parent stores and sends that very text.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import signal
import threading
import time
from collections.abc import Mapping
from contextlib import suppress
from dataclasses import dataclass

from sleuth.config import Settings
from sleuth.research.planning.review import PlanInbox
from sleuth.research.preflight import model_problem
from sleuth.runs.messages import (
    AnswerPlan,
    CancelRun,
    Command,
    Engine,
    McpStates,
    Ready,
    Reply,
    RunDone,
    Shutdown,
    StartRun,
    ToolRead,
)
from sleuth.runs.pipes import EnginePipe
from sleuth.runs.warmup import warm_engine
from sleuth.store.packet_writer import StoredPacket
from sleuth.stream.emitter import Emitter
from sleuth.stream.ending import closing, unstarted_run_start
from sleuth.stream.packets import Packet, Placement, StopReason
from sleuth.stream.results import ResearchRequest, ResearchResult
from sleuth.tools.mcp.hub import close_loop_hub, loop_hub

log = logging.getLogger(__name__)

YOUNG_COLLECTION_EVERY = 10_000  # allocations between two young-generation collections (CPython's default is lower)


def worker_main(conn: EnginePipe, settings: Settings, engine: Engine, environ: Mapping[str, str]) -> None:
    """An engine process, forked from the fork server: `environ` is the server's environment when it
    launched this engine (the fork server's own is that of its start)."""
    os.environ.clear()
    os.environ.update(environ)
    # Ctrl-C in a terminal reaches the whole process group; the server decides when the
    # engine stops (its "shutdown" command, or EOF when the server is gone), so runs can be
    # ended as interrupted in order instead of the engine dying first.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    asyncio.run(_Worker(conn, settings, engine).serve())


def thread_main(conn: EnginePipe, settings: Settings, engine: Engine) -> None:
    """The engine on a thread of the server's process: its own event loop, as in a process of its
    own. The garbage collector is the server's, so it is left as it is. Its end of the pipe closes
    when it returns, so the server's reader sees the end as it sees a process exit."""
    try:
        asyncio.run(_Worker(conn, settings, engine, own_process=False).serve())
    finally:
        conn.close()


def _model_check(settings: Settings) -> str | None:
    """Why the configured models cannot be called, or None; a check that breaks says nothing (the
    first run's call will tell)."""
    try:
        return model_problem(settings)
    except Exception:
        log.exception("the engine's model check failed")
        return None


async def warm_up(settings: Settings, *, own_process: bool = True) -> str | None:
    """Pay the first run's one-off costs now: litellm's import and tool path, the search tools;
    then check the models with the litellm just loaded (the answer goes to the server in `Ready`).
    On a thread: the loop keeps serving commands (a cancel) meanwhile."""
    await asyncio.to_thread(warm_engine, settings)
    problem = await asyncio.to_thread(_model_check, settings)
    if not own_process:
        return problem
    # What the warm-up imported (litellm's heap above all) lives as long as the process: frozen, no
    # later collection walks it again. No run has started yet, so the full pass first costs no run
    # anything (a run's own garbage is still collected).
    gc.collect()
    gc.freeze()
    # Tens of live runs allocate fast, and every young collection walks their young objects:
    # collecting less often spends less of each run's CPU in the collector, and what a run leaves
    # is still freed, a little later.
    gc.set_threshold(YOUNG_COLLECTION_EVERY, *gc.get_threshold()[1:])
    return problem


@dataclass(frozen=True, slots=True)
class _WarmedUp:
    """The warm-up ended (on this process's own queue, beside the server's commands)."""


class _Worker:
    def __init__(self, conn: EnginePipe, settings: Settings, engine: Engine, *, own_process: bool = True) -> None:
        self._conn = conn
        self._own_process = own_process
        self._settings = settings
        self._engine = engine
        self._tasks: dict[str, asyncio.Task[ResearchResult]] = {}
        self._drivers: set[asyncio.Task[None]] = set()
        self._cancel_early: set[str] = set()
        self._inboxes: dict[str, PlanInbox] = {}
        self._send_lock = threading.Lock()
        self._parent_gone = False

    async def serve(self) -> None:
        loop = asyncio.get_running_loop()
        stopping = asyncio.Event()
        commands: asyncio.Queue[Command | _WarmedUp] = asyncio.Queue()

        def read() -> None:  # blocking reads on a thread; commands are handled on the loop
            try:
                while True:
                    loop.call_soon_threadsafe(commands.put_nowait, self._conn.recv())
            except (EOFError, OSError):
                with suppress(RuntimeError):  # an engine thread's loop may have closed first
                    loop.call_soon_threadsafe(commands.put_nowait, Shutdown())
            except RuntimeError:
                pass  # the loop closed (an engine thread that has stopped): nobody reads commands

        threading.Thread(target=read, name="sleuth-engine-commands", daemon=True).start()
        # Commands are served during the warm-up: runs wait for it, but a cancel of a waiting run
        # ends it at once (its task is cancelled before it starts, so it needs nothing warm).
        warming = asyncio.create_task(warm_up(self._settings, own_process=self._own_process))
        warming.add_done_callback(lambda _: commands.put_nowait(_WarmedUp()))
        hub = loop_hub(self._settings)  # the MCP servers start now, beside the warm-up, not with the first run
        if hub is not None:
            hub.watch(lambda states: self._send(McpStates(states)))
        waiting: dict[str, ResearchRequest] = {}
        while not stopping.is_set():
            match await commands.get():
                case _WarmedUp():
                    self._warmed(warming)
                    for run_id, request in waiting.items():
                        self._start(run_id, request)
                    waiting.clear()
                case StartRun(run_id, request):
                    if warming.done():
                        self._start(run_id, request)
                    else:
                        waiting[run_id] = request
                case CancelRun(run_id):
                    self._cancel(run_id)
                    if run_id in waiting:
                        self._start(run_id, waiting.pop(run_id))
                case AnswerPlan(run_id, answer):
                    inbox = self._inboxes.get(run_id)
                    if inbox is not None:
                        inbox.deliver(answer)
                case Shutdown():
                    for run_id in [*self._tasks, *waiting]:
                        self._cancel(run_id)
                    for run_id, request in waiting.items():
                        self._start(run_id, request)
                    waiting.clear()
                    if self._drivers:
                        await asyncio.wait(list(self._drivers), timeout=10)
                    stopping.set()
        warming.cancel()
        await close_loop_hub()  # the MCP servers the runs shared, closed by their owner

    def _warmed(self, warming: asyncio.Task[str | None]) -> None:
        problem = None
        if not warming.cancelled() and warming.exception() is not None:
            # Not fatal: a process that died here would be replaced, and die again, forever.
            log.error("engine warm-up failed; runs will pay for it, or fail with its error: %r", warming.exception())
        elif not warming.cancelled():
            problem = warming.result()
        self._send(Ready(model_problem=problem))

    def _start(self, run_id: str, request: ResearchRequest) -> None:
        driver = asyncio.create_task(self._drive(run_id, request))
        self._drivers.add(driver)
        driver.add_done_callback(self._drivers.discard)

    def _cancel(self, run_id: str) -> None:
        task = self._tasks.get(run_id)
        if task is None:
            self._cancel_early.add(run_id)  # its `StartRun` is not handled yet
        else:
            task.cancel()

    def _send(self, message: Reply) -> None:
        if self._parent_gone:
            return
        try:
            with self._send_lock:
                self._conn.send(message)
        except OSError:
            # The server died (kill -9): nothing can be stored any more. The command reader
            # sees EOF and shuts this process down; its restarted successor recovers the runs.
            self._parent_gone = True

    async def _drive(self, run_id: str, request: ResearchRequest) -> None:
        last_turn = [0]

        def sink(packet: Packet) -> None:
            last_turn[0] = packet.placement.turn_index
            self._send(StoredPacket(run_id, packet.seq, packet.obj.type, time.time(), packet.model_dump_json()))

        emitter = Emitter(run_id, [sink], documents=lambda document: self._send(ToolRead(run_id, document)))
        inbox = self._inboxes[run_id] = PlanInbox()
        task = asyncio.create_task(self._engine(request, self._settings, emitter, reviewer=inbox))
        self._tasks[run_id] = task
        if run_id in self._cancel_early:
            task.cancel()
        result: ResearchResult | None = None
        error: str | None = None
        cancelled = False
        try:
            result = await task
        except asyncio.CancelledError:
            cancelled = True
        except Exception as exc:  # the engine should not raise; if it does, the run still ends
            error = f"{type(exc).__name__}: {exc}"
        finally:
            self._tasks.pop(run_id, None)
            self._inboxes.pop(run_id, None)
            self._cancel_early.discard(run_id)
        if not emitter.stopped:  # it raised, or was cancelled before it began: end it as every run ends
            start = unstarted_run_start(
                session_id=request.session_id, question=request.question, mode=request.mode_label(self._settings.mode)
            )
            reason: StopReason = "cancelled" if cancelled else "error"
            for obj in closing(started=emitter.next_seq > 0, run_start=start, error=error, reason=reason):
                emitter.emit(Placement(turn_index=last_turn[0]), obj)
        self._send(
            RunDone(
                run_id=run_id,
                result_json=result.model_dump_json() if result is not None else None,
                error=error,
                cancelled=cancelled,
                stop_reason=emitter.stop_reason,
            )
        )

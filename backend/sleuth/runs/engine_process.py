"""The parent side of one engine process.

Why a process: a run is CPU-heavy Python (litellm parsing streamed chunks, token counting,
search), and in the server's process it would hold the interpreter lock for long stretches,
so packet commits and SSE writes would queue behind it, and every client's packets would arrive
late while many runs are busy. In its own process the engine can be as busy as it likes; the
server process only stores and forwards its packets.

A reader thread receives the worker's `Reply`s: packets go straight to `on_packet` (no
event-loop hop before the commit); `Ready`, `RunDone` and an unexpected exit are handed to their
callbacks. `EnginePool` runs several of these.

`EngineThread` is the same engine on a thread of the server's process (`SLEUTH_ENGINE_PROCESSES=0`),
for a machine with one core or one process to spare: the same messages over an in-process pipe,
without the isolation (a busy run slows the server's own loop, and nothing can kill it alone).
"""

from __future__ import annotations

import logging
import multiprocessing
import threading
from collections.abc import Callable
from typing import Any

from sleuth.config import Settings
from sleuth.research.planning.review import PlanAnswer
from sleuth.runs.engine_main import thread_main, worker_main
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
)
from sleuth.runs.pipes import EnginePipe, thread_pipe
from sleuth.store.packet_writer import StoredPacket
from sleuth.stream.results import ResearchRequest

log = logging.getLogger(__name__)


class EngineProcess:
    def __init__(
        self,
        settings: Settings,
        engine: Engine,
        *,
        on_packet: Callable[[StoredPacket], None],
        on_done: Callable[[RunDone], None],
        on_exit: Callable[[], None],
        on_ready: Callable[[Ready], None] | None = None,
        on_mcp: Callable[[McpStates], None] | None = None,
        name: str = "sleuth-engine",
    ) -> None:
        self._settings = settings
        self._engine = engine
        self._on_packet = on_packet
        self._on_done = on_done
        self._on_exit = on_exit
        self._on_ready = on_ready
        self._on_mcp = on_mcp
        self._name = name
        # spawn, not fork: the server process has threads (writer, uvicorn), which fork would
        # copy in whatever state their locks happen to be in.
        self._ctx = multiprocessing.get_context("spawn")
        self._conn: EnginePipe | None = None
        self._process: Any = None
        self._reader: threading.Thread | None = None
        self._send_lock = threading.Lock()
        self._stopping = False
        self.ready = threading.Event()  # set once the worker has warmed up

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def start(self) -> None:
        self._conn = self._launch()
        self._stopping = False
        self._reader = threading.Thread(target=self._read, name=f"{self._name}-reader", daemon=True)
        self._reader.start()

    def start_run(self, run_id: str, request: ResearchRequest) -> None:
        self._send(StartRun(run_id, request))

    def cancel(self, run_id: str) -> None:
        self._send(CancelRun(run_id))

    def answer_plan(self, run_id: str, answer: PlanAnswer) -> None:
        self._send(AnswerPlan(run_id, answer))

    def request_stop(self) -> None:
        """Ask the worker to cancel its runs and exit. A worker still warming up has no run to end
        in order: it is killed rather than waited for."""
        self._stopping = True
        if self._process is not None and not self.ready.is_set():
            self._process.kill()
            return
        try:
            self._send(Shutdown())
        except OSError:
            pass

    def wait_stopped(self, timeout: float) -> None:
        """After `request_stop`: wait for the exit; kill the worker if it takes over `timeout`."""
        if self._process is not None:
            self._process.join(timeout)
            if self._process.is_alive():
                self._process.kill()
                self._process.join(5)
        if self._reader is not None:
            self._reader.join(timeout)

    def _launch(self) -> EnginePipe:
        """Start the worker; the server's end of its pipe."""
        parent, child = self._ctx.Pipe(duplex=True)
        self._process = self._ctx.Process(
            target=worker_main, args=(child, self._settings, self._engine), name=self._name, daemon=True
        )
        self._process.start()
        child.close()  # the child holds its end; when the child dies, our reads see EOF
        return parent

    def _exit_detail(self) -> str:
        return f"process {self.pid} (exit code {self._process.exitcode})"

    def _send(self, message: Command) -> None:
        if self._conn is None:
            raise OSError("the engine has not started")
        with self._send_lock:
            self._conn.send(message)

    def _read(self) -> None:
        assert self._conn is not None
        try:
            while True:
                message: Reply = self._conn.recv()
                match message:
                    case StoredPacket():
                        self._on_packet(message)
                    case RunDone():
                        self._on_done(message)
                    case Ready():
                        self.ready.set()
                        if self._on_ready is not None:
                            self._on_ready(message)
                    case McpStates():
                        if self._on_mcp is not None:
                            self._on_mcp(message)
        except (EOFError, OSError):
            pass
        if not self._stopping:
            log.error("the engine %s exited unexpectedly", self._exit_detail())
            self._on_exit()


class EngineThread(EngineProcess):
    """The engine on a thread of this process, with an event loop of its own."""

    @property
    def pid(self) -> int | None:
        return None  # nothing to signal but this whole process

    def _launch(self) -> EnginePipe:
        parent, child = thread_pipe()
        self._process = threading.Thread(
            target=thread_main, args=(child, self._settings, self._engine), name=self._name, daemon=True
        )
        self._process.start()
        return parent

    def request_stop(self) -> None:
        """A thread cannot be killed: one still warming up stops once its warm-up has."""
        self._stopping = True
        try:
            self._send(Shutdown())
        except OSError:
            pass

    def wait_stopped(self, timeout: float) -> None:
        if self._process is not None:
            self._process.join(timeout)
            if self._process.is_alive():
                log.error("the engine thread did not stop within %.0f s; it is left to end with the process", timeout)
        if self._reader is not None:
            self._reader.join(timeout)

    def _exit_detail(self) -> str:
        return "thread"

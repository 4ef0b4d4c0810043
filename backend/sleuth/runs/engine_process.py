"""The parent side of one engine process.

Why a process: a run is CPU-heavy Python (litellm parsing streamed chunks, token counting,
search), and in the server's process it would hold the interpreter lock for long stretches,
so packet commits and SSE writes would queue behind it, and every client's packets would arrive
late while many runs are busy. In its own process the engine can be as busy as it likes; the
server process only stores and forwards its packets.

Engine processes are forked from a fork server (`runs/engine_preload.py`) that imported litellm and the
engine's libraries once: the engines share those pages copy-on-write instead of each holding its own
copy. The fork server is a fresh interpreter started by `multiprocessing`, with no thread of the
server's process, so forking it copies no lock in an unknown state. Its first fork waits for those
imports, so each process is launched on its reader thread: `start` returns at once.

A reader thread launches the worker, then receives its `Reply`s: packets go straight to
`on_packet` (no event-loop hop before the commit); `Ready`, `RunDone` and an unexpected exit are
handed to their callbacks. `EnginePool` runs several of these.

`EngineThread` is the same engine on a thread of the server's process (`SLEUTH_ENGINE_PROCESSES=0`),
for a machine with one core or one process to spare: the same messages over an in-process pipe,
without the isolation (a busy run slows the server's own loop, and nothing can kill it alone).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from typing import Any

from sleuth.config import Settings
from sleuth.core.fork_server import fork_server
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
    ToolRead,
)
from sleuth.runs.pipes import EnginePipe, thread_pipe
from sleuth.store.packet_writer import StoredPacket
from sleuth.stream.results import ResearchRequest

log = logging.getLogger(__name__)

# How long stopping waits for a launch under way: the fork server's imports, on a loaded machine.
LAUNCH_S = 120.0

# What the fork server imports before it forks an engine (`core/fork_server.py`).
PRELOAD = "sleuth.runs.engine_preload"


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
        on_tool: Callable[[ToolRead], None] | None = None,
        name: str = "sleuth-engine",
    ) -> None:
        self._settings = settings
        self._engine = engine
        self._on_packet = on_packet
        self._on_done = on_done
        self._on_exit = on_exit
        self._on_ready = on_ready
        self._on_mcp = on_mcp
        self._on_tool = on_tool
        self._name = name
        self._conn: EnginePipe | None = None
        self._process: Any = None
        self._reader: threading.Thread | None = None
        self._send_lock = threading.Lock()
        self._stopping = False
        self._launched = threading.Event()  # set once the launch has ended, started or not
        self.ready = threading.Event()  # set once the worker has warmed up

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None and self._launched.is_set() else None

    def start(self) -> None:
        """Launch the worker on the reader thread; commands sent meanwhile wait in the pipe."""
        self._conn, child = self._pipe()
        self._stopping = False
        self._reader = threading.Thread(target=self._launch_and_read, args=(child,), name=f"{self._name}-reader")
        self._reader.daemon = True
        self._reader.start()

    def start_run(self, run_id: str, request: ResearchRequest) -> None:
        self._send(StartRun(run_id, request))

    def cancel(self, run_id: str) -> None:
        self._send(CancelRun(run_id))

    def answer_plan(self, run_id: str, answer: PlanAnswer) -> None:
        self._send(AnswerPlan(run_id, answer))

    def request_stop(self) -> None:
        """Ask the worker to cancel its runs and exit. A worker still warming up has no run to end
        in order: it is killed rather than waited for (once its launch has ended: until then there
        is nothing to kill)."""
        self._stopping = True
        if not self.ready.is_set() and self._launched.wait(LAUNCH_S) and self.pid is not None:
            self._process.kill()
            return
        try:
            self._send(Shutdown())
        except OSError:
            pass

    def wait_stopped(self, timeout: float) -> None:
        """After `request_stop`: wait for the exit; kill the worker if it takes over `timeout`."""
        if self.pid is not None:
            self._process.join(timeout)
            if self._process.is_alive():
                self._process.kill()
                self._process.join(5)
        if self._reader is not None:
            self._reader.join(timeout)

    def _pipe(self) -> tuple[EnginePipe, EnginePipe]:
        """(the server's end, the worker's end)."""
        return fork_server(PRELOAD).Pipe(duplex=True)

    def _launch(self, child: EnginePipe) -> None:
        # The worker gets this process's environment as it is now, as a spawned process would, not
        # the fork server's, which is the environment of the moment the first engine started.
        self._process = fork_server(PRELOAD).Process(
            target=worker_main, args=(child, self._settings, self._engine, dict(os.environ)), name=self._name
        )
        self._process.daemon = True
        self._process.start()
        child.close()  # the child holds its end; when the child dies, our reads see EOF

    def _launch_and_read(self, child: EnginePipe) -> None:
        try:
            self._launch(child)
        except Exception:
            # Not handed to `on_exit`: a replacement would fail the same way, over and over. Runs
            # sent here fail as sent to a dead engine; /api/health never says this one is ready.
            log.exception("the engine %s could not be started", self._name)
            child.close()
            return
        finally:
            self._launched.set()
        self._read()

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
                    case ToolRead():
                        if self._on_tool is not None:
                            self._on_tool(message)
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

    def _pipe(self) -> tuple[EnginePipe, EnginePipe]:
        return thread_pipe()

    def _launch(self, child: EnginePipe) -> None:
        self._process = threading.Thread(
            target=thread_main, args=(child, self._settings, self._engine), name=self._name, daemon=True
        )
        self._process.start()

    def request_stop(self) -> None:
        """A thread cannot be killed: one still warming up stops once its warm-up has."""
        self._stopping = True
        try:
            self._send(Shutdown())
        except OSError:
            pass

    def wait_stopped(self, timeout: float) -> None:
        if self._process is not None and self._launched.wait(timeout):
            self._process.join(timeout)
            if self._process.is_alive():
                log.error("the engine thread did not stop within %.0f s; it is left to end with the process", timeout)
        if self._reader is not None:
            self._reader.join(timeout)

    def _exit_detail(self) -> str:
        return "thread"

"""The parent side of one engine process.

Why a process: a run is CPU-heavy Python (litellm parsing streamed chunks, token counting,
search), and in the server's process it would hold the interpreter lock for long stretches,
so packet commits and SSE writes would queue behind it, and every client's packets would arrive
late while many runs are busy. In its own process the engine can be as busy as it likes; the
server process only stores and forwards its packets.

A reader thread receives the worker's messages: packets go straight to `on_packet` (no
event-loop hop before the commit); `ready`, `done` messages and an unexpected exit are handed
to their callbacks. `EnginePool` runs several of these.
"""

from __future__ import annotations

import logging
import multiprocessing
import threading
from collections.abc import Callable
from typing import Any

from sleuth.config import Settings
from sleuth.research.planning.review import PlanAnswer
from sleuth.runs.engine_main import worker_main
from sleuth.runs.messages import DoneMessage, Engine
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
        on_done: Callable[[DoneMessage], None],
        on_exit: Callable[[], None],
        name: str = "sleuth-engine",
    ) -> None:
        self._settings = settings
        self._engine = engine
        self._on_packet = on_packet
        self._on_done = on_done
        self._on_exit = on_exit
        self._name = name
        # spawn, not fork: the server process has threads (writer, uvicorn), which fork would
        # copy in whatever state their locks happen to be in.
        self._ctx = multiprocessing.get_context("spawn")
        self._conn: Any = None
        self._process: Any = None
        self._reader: threading.Thread | None = None
        self._send_lock = threading.Lock()
        self._stopping = False
        self.ready = threading.Event()  # set once the worker has warmed up

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def start(self) -> None:
        parent, child = self._ctx.Pipe(duplex=True)
        self._process = self._ctx.Process(
            target=worker_main, args=(child, self._settings, self._engine), name=self._name, daemon=True
        )
        self._process.start()
        child.close()  # the child holds its end; when the child dies, our reads see EOF
        self._conn = parent
        self._stopping = False
        self._reader = threading.Thread(target=self._read, name=f"{self._name}-reader", daemon=True)
        self._reader.start()

    def start_run(self, run_id: str, request: ResearchRequest) -> None:
        self._send(("start", run_id, request))

    def cancel(self, run_id: str) -> None:
        self._send(("cancel", run_id))

    def answer_plan(self, run_id: str, answer: PlanAnswer) -> None:
        self._send(("plan", run_id, answer))

    def request_stop(self) -> None:
        """Ask the worker to cancel its runs and exit. A worker still warming up has no run to end
        in order: it is killed rather than waited for."""
        self._stopping = True
        if self._process is not None and not self.ready.is_set():
            self._process.kill()
            return
        try:
            self._send(("shutdown",))
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

    def _send(self, message: tuple[Any, ...]) -> None:
        with self._send_lock:
            self._conn.send(message)

    def _read(self) -> None:
        try:
            while True:
                message = self._conn.recv()
                if message[0] == "packet":
                    self._on_packet(StoredPacket(*message[1:]))
                elif message[0] == "done":
                    self._on_done(message[1:])
                elif message[0] == "ready":
                    self.ready.set()
        except (EOFError, OSError):
            pass
        if not self._stopping:
            log.error("the engine process %s exited unexpectedly (exit code %s)", self.pid, self._process.exitcode)
            self._on_exit()

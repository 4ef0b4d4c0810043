"""The parent side of the engine process.

Why a process: a run is CPU-heavy Python (litellm parsing streamed chunks, token counting,
search), and in the server's process it would hold the interpreter lock for long stretches,
so packet commits and SSE writes would queue behind it (measured: p99 delivery of ~0.8 s at
100 concurrent runs with the engine on a thread). In its own process the engine can be as busy
as it likes; the server process only stores and forwards its packets.

A reader thread receives the worker's messages: packets go straight to the packet writer (no
event-loop hop before the commit), `done` messages and an unexpected exit are handed to the
callbacks, which the RunManager bounces onto its loop.
"""

from __future__ import annotations

import logging
import multiprocessing
import threading
from collections.abc import Callable
from typing import Any

from sleuth.api.engine_worker import worker_main
from sleuth.api.run_manager_types import Engine
from sleuth.config import Settings
from sleuth.research.plan_review import PlanAnswer
from sleuth.research.types import ResearchRequest
from sleuth.store import StoredPacket

log = logging.getLogger(__name__)

DoneMessage = tuple[str, str | None, str | None, bool, str | None]  # run_id, result_json, error, cancelled, stop_reason


class EngineProcess:
    def __init__(
        self,
        settings: Settings,
        engine: Engine,
        *,
        on_packet: Callable[[StoredPacket], None],
        on_done: Callable[[DoneMessage], None],
        on_exit: Callable[[], None],
    ) -> None:
        self._settings = settings
        self._engine = engine
        self._on_packet = on_packet
        self._on_done = on_done
        self._on_exit = on_exit
        # spawn, not fork: the server process has threads (writer, uvicorn), which fork would
        # copy in whatever state their locks happen to be in.
        self._ctx = multiprocessing.get_context("spawn")
        self._conn: Any = None
        self._process: Any = None
        self._reader: threading.Thread | None = None
        self._send_lock = threading.Lock()
        self._stopping = False

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def start(self) -> None:
        parent, child = self._ctx.Pipe(duplex=True)
        self._process = self._ctx.Process(
            target=worker_main, args=(child, self._settings, self._engine), name="sleuth-engine", daemon=True
        )
        self._process.start()
        child.close()  # the child holds its end; when the child dies, our reads see EOF
        self._conn = parent
        self._stopping = False
        self._reader = threading.Thread(target=self._read, name="sleuth-engine-reader", daemon=True)
        self._reader.start()

    def start_run(self, run_id: str, request: ResearchRequest) -> None:
        self._send(("start", run_id, request))

    def cancel(self, run_id: str) -> None:
        self._send(("cancel", run_id))

    def answer_plan(self, run_id: str, answer: PlanAnswer) -> None:
        self._send(("plan", run_id, answer))

    def stop(self, timeout: float = 10.0) -> None:
        """Ask the worker to cancel its runs and exit; kill it if it does not within `timeout`."""
        self._stopping = True
        try:
            self._send(("shutdown",))
        except OSError:
            pass
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
        except (EOFError, OSError):
            pass
        if not self._stopping:
            log.error("the engine process exited unexpectedly (exit code %s)", self._process.exitcode)
            self._on_exit()

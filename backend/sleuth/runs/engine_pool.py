"""Several engine processes behind one `RunExecutor`, each new run on the least loaded.

One process per core by default (`SLEUTH_ENGINE_PROCESSES`): a run is CPU-bound Python, and one
event loop saturates one core. Each process warms up at start, so the first run after the server
starts does not pay for imports. A process that dies ends only the runs it held (`on_exit` with
their ids) and is replaced; the others carry on. Zero processes means one engine on a thread of
this process (`EngineThread`): no start-up of its own, and no isolation.
"""

from __future__ import annotations

import threading

from sleuth.config import Settings
from sleuth.research.planning.review import PlanAnswer
from sleuth.runs.engine_process import EngineProcess, EngineThread
from sleuth.runs.executor import RunEvents
from sleuth.runs.messages import Engine, RunDone
from sleuth.stream.results import ResearchRequest


class EnginePool:
    def __init__(self, settings: Settings, engine: Engine, events: RunEvents, *, processes: int) -> None:
        self._settings = settings
        self._engine = engine
        self._events = events
        self._size = max(processes, 1)
        self._engine_class = EngineProcess if processes else EngineThread
        self._slots: list[EngineProcess] = []
        self._placed: dict[str, EngineProcess] = {}  # live run id -> the process running it
        # Runs are placed from the event loop; `RunDone` and exits arrive on reader threads.
        self._lock = threading.Lock()
        self._stopping = False

    # -- RunExecutor ------------------------------------------------------------------------

    def start(self) -> None:
        with self._lock:
            self._slots = [self._new_process(index) for index in range(self._size)]
        for process in self._slots:
            process.start()

    def start_run(self, run_id: str, request: ResearchRequest) -> None:
        with self._lock:
            process = min(self._slots, key=lambda p: (not p.ready.is_set(), self._load(p)))
            self._placed[run_id] = process
            try:
                process.start_run(run_id, request)
            except OSError:
                del self._placed[run_id]
                raise

    def answer_plan(self, run_id: str, answer: PlanAnswer) -> None:
        process = self._placed.get(run_id)
        if process is None:
            raise OSError(f"run {run_id} is not running here")
        process.answer_plan(run_id, answer)

    def cancel(self, run_id: str) -> None:
        process = self._placed.get(run_id)
        if process is not None:
            try:
                process.cancel(run_id)
            except OSError:
                pass  # its process died: `on_exit` ends the run

    def stop(self, timeout: float) -> None:
        with self._lock:
            self._stopping = True
            slots = list(self._slots)
        for process in slots:  # all asked first, so they wind down their runs side by side
            process.request_stop()
        for process in slots:
            process.wait_stopped(timeout)

    def readiness(self) -> tuple[int, int]:
        slots = list(self._slots)
        return sum(1 for p in slots if p.ready.is_set()), len(slots)

    # -- for tests --------------------------------------------------------------------------

    @property
    def pids(self) -> list[int]:
        return [pid for pid in (p.pid for p in self._slots) if pid is not None]

    def wait_ready(self, timeout: float) -> bool:
        """Block until every engine has warmed up (False on timeout)."""
        return all(process.ready.wait(timeout) for process in list(self._slots))

    def pid_of(self, run_id: str) -> int | None:
        """The engine process a live run was placed on."""
        process = self._placed.get(run_id)
        return process.pid if process is not None else None

    # -- internals --------------------------------------------------------------------------

    def _load(self, process: EngineProcess) -> int:
        return sum(1 for placed in self._placed.values() if placed is process)

    def _new_process(self, index: int) -> EngineProcess:
        holder: list[EngineProcess] = []
        process = self._engine_class(
            self._settings,
            self._engine,
            on_packet=self._events.on_packet,
            on_done=self._on_done,
            on_exit=lambda: self._on_exit(holder[0], index),
            on_ready=self._events.on_ready,
            on_mcp=self._events.on_mcp,
            on_tool=self._events.on_tool,
            name=f"sleuth-engine-{index}",
        )
        holder.append(process)
        return process

    def _on_done(self, message: RunDone) -> None:
        with self._lock:
            self._placed.pop(message.run_id, None)
        self._events.on_done(message)

    def _on_exit(self, dead: EngineProcess, index: int) -> None:
        """Reader thread of `dead`: forget its runs, start its successor, report the lost runs."""
        with self._lock:
            lost = [run_id for run_id, process in self._placed.items() if process is dead]
            for run_id in lost:
                del self._placed[run_id]
            if not self._stopping and self._slots[index] is dead:
                successor = self._slots[index] = self._new_process(index)
                successor.start()  # under the lock: no run may be placed on a process not started
        self._events.on_exit(lost)

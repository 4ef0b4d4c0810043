"""Where runs execute, seen from the run manager: a narrow interface with one implementation
today (`EnginePool`: engine processes on this machine). Another executor — workers taking runs
from a job queue — plugs in behind the same methods and callbacks.

Calls come from the server's event loop and must not block it for long; the callbacks may be
called on any thread (the manager bounces what needs its loop onto the loop).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from sleuth.research.planning.review import PlanAnswer
from sleuth.runs.messages import McpStates, Ready, RunDone, ToolRead
from sleuth.store.packet_writer import StoredPacket
from sleuth.stream.results import ResearchRequest


@dataclass(frozen=True)
class RunEvents:
    """What an executor reports back."""

    on_packet: Callable[[StoredPacket], None]  # one packet of a run, in seq order per run
    on_done: Callable[[RunDone], None]  # a run ended (its `stop` was sent before this)
    on_exit: Callable[[list[str]], None]  # these runs were lost with the process that ran them
    on_ready: Callable[[Ready], None] = lambda _ready: None  # an engine warmed up, with its model check
    on_mcp: Callable[[McpStates], None] = lambda _states: None  # an engine's MCP servers started, or one was lost
    on_tool: Callable[[ToolRead], None] = lambda _read: None  # a run read what a tool returned


class RunExecutor(Protocol):
    def start(self) -> None:
        """Start executing (engine processes begin warming up); returns without waiting for them."""

    def start_run(self, run_id: str, request: ResearchRequest) -> None:
        """Hand a run over. Raises OSError if it cannot be (its process just died)."""

    def answer_plan(self, run_id: str, answer: PlanAnswer) -> None:
        """Deliver a plan-review answer to the process running `run_id`. Raises OSError if it is gone."""

    def cancel(self, run_id: str) -> None:
        """Ask the run to cancel; it ends with `stop cancelled` and `on_done`."""

    def stop(self, timeout: float) -> None:
        """Cancel every run and stop; blocking, so call it off the event loop."""

    def readiness(self) -> tuple[int, int]:
        """(ready, total): how many of its engines can start a run at once (warmed up) — for health."""

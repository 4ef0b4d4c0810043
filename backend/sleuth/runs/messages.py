"""Every message between the server and an engine process, typed, and the engine's own shape.

They cross a `multiprocessing` pipe (pickled), so each is a frozen dataclass of plain values and
pydantic models. The server sends `Command`s; the engine answers with `Reply`s: `Ready` once, a
`StoredPacket` per packet (serialised once, in the engine; the server stores and sends that very
text), `RunDone` when a run has ended, `McpStates` when its MCP servers have started or one is lost,
and `ToolRead` when a run has read what a tool returned.
"""

from __future__ import annotations

from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any, Protocol

from sleuth.config import Settings
from sleuth.research.planning.review import PlanAnswer, PlanReviewer
from sleuth.store.packet_writer import StoredPacket
from sleuth.stream.emitter import Emitter
from sleuth.stream.results import ResearchRequest, ResearchResult, ToolDocument
from sleuth.tools.mcp.hub import ServerState

# -- server -> engine -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StartRun:
    run_id: str
    request: ResearchRequest


@dataclass(frozen=True, slots=True)
class CancelRun:
    run_id: str


@dataclass(frozen=True, slots=True)
class AnswerPlan:
    run_id: str
    answer: PlanAnswer


@dataclass(frozen=True, slots=True)
class Shutdown:
    """Cancel every run, end them in order, exit. Also what the engine tells itself when the server is gone."""


Command = StartRun | CancelRun | AnswerPlan | Shutdown

# -- engine -> server -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Ready:
    """The engine has warmed up: runs sent now start at once.

    `model_problem` is its model check (every configured model known to litellm, keys present),
    made once its warm-up has loaded litellm: the server asks the engines rather than loading
    litellm, hundreds of MiB, in its own process. None when every model can be called."""

    model_problem: str | None = None


@dataclass(frozen=True, slots=True)
class RunDone:
    """A run ended; its `stop` packet was sent before this."""

    run_id: str
    result_json: str | None  # the `ResearchResult`, when the engine returned one
    error: str | None  # what the engine raised, if it raised
    cancelled: bool
    stop_reason: str | None  # of the `stop` packet the run ended with

    def result(self) -> ResearchResult | None:
        return ResearchResult.model_validate_json(self.result_json) if self.result_json else None


@dataclass(frozen=True, slots=True)
class McpStates:
    """The engine's MCP servers: sent once they have all started or failed, and again when one is
    lost. The server asks its engines, as it does the model check, rather than start servers itself."""

    servers: tuple[ServerState, ...]


@dataclass(frozen=True, slots=True)
class ToolRead:
    """What a tool (an MCP server) returned to a run, as soon as it is read: kept for the viewer."""

    run_id: str
    document: ToolDocument


Reply = Ready | StoredPacket | RunDone | McpStates | ToolRead


class Engine(Protocol):
    """The engine entry point's shape (`run_research`). It must be importable by reference (a
    module-level function): it is sent to the engine process. `reviewer` answers plan reviews."""

    def __call__(
        self, request: ResearchRequest, settings: Settings, emitter: Emitter, *, reviewer: PlanReviewer | None = None
    ) -> Coroutine[Any, Any, ResearchResult]: ...

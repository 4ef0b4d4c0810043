"""The explicit state of one run, shared by its orchestrator and agents (one event loop, no locks)."""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from sleuth.config import Mode, Settings
from sleuth.core.clock import Clock
from sleuth.core.markdown import cited_numbers
from sleuth.llm.capabilities import supports_reasoning
from sleuth.llm.gateway import LLMGateway
from sleuth.llm.types import Tokens
from sleuth.research.modes import ModeLimits, mode_limits
from sleuth.research.sources import Numbering, SourceRegistry, UnsafeUrlCheck
from sleuth.research.time.deadlines import Pace, RunDeadlines
from sleuth.stream.emitter import Emitter
from sleuth.stream.packets import ChangeSet, Degraded, Packet, PacketObj, Placement, Report
from sleuth.stream.results import ResearchRequest, Snapshot, ToolDocument
from sleuth.tools.base import Page, SourceBlocked
from sleuth.tools.toolbox import SearchOutcome, Toolbox

K = TypeVar("K")
V = TypeVar("V")


class OnceCache(Generic[K, V]):
    """Computes each key once per run; concurrent askers share the one in-flight computation.

    Failures are cached too (a page that failed to open is not fetched again), except
    cancellation: if the agent computing a value is cancelled, the next asker computes it.
    """

    def __init__(self) -> None:
        self._futures: dict[K, asyncio.Future[V]] = {}

    def peek(self, key: K) -> V | None:
        """The value for `key` if it has already been computed successfully, without computing it."""
        future = self._futures.get(key)
        if future is None or not future.done() or future.cancelled() or future.exception() is not None:
            return None
        return future.result()

    async def get(self, key: K, compute: Callable[[], Awaitable[V]]) -> V:
        while (future := self._futures.get(key)) is not None:
            try:
                return await asyncio.shield(future)
            except asyncio.CancelledError:
                if not future.cancelled():
                    raise  # we were cancelled ourselves
        future = asyncio.get_running_loop().create_future()
        self._futures[key] = future
        try:
            value = await compute()
        except asyncio.CancelledError:
            del self._futures[key]
            future.cancel()
            raise
        except Exception as exc:
            future.set_exception(exc)
            future.exception()  # mark retrieved: waiters may not exist
            raise
        future.set_result(value)
        return value


@dataclass
class RunTally:
    """What the method note counts that the source registry does not: refusals, failures, cycles, degradations."""

    blocked_credibility: int = 0
    blocked_ssrf: int = 0
    failed_reads: int = 0
    cycles_used: int = 0
    degraded: list[str] = field(default_factory=list)
    _failed_urls: set[str] = field(default_factory=set)

    def observe(self, packet: Packet) -> None:
        """An emitter sink: every `degraded` packet the run sends is counted, whoever sent it."""
        if isinstance(packet.obj, Degraded):
            self.degraded.append(packet.obj.level)

    def read_failed(self, url: str, error: BaseException) -> None:
        """Count one URL that could not be read, once however many agents tried it."""
        if url in self._failed_urls:
            return
        self._failed_urls.add(url)
        if isinstance(error, SourceBlocked):
            if error.policy == "credibility":
                self.blocked_credibility += 1
            else:
                self.blocked_ssrf += 1
        else:
            self.failed_reads += 1


@dataclass
class Finding:
    """One agent's contribution, with citations already in the run's global numbering."""

    task: str
    report: str
    tab_index: int
    turn_index: int
    status: str  # done | failed | timed_out
    plan_step: int | None = None  # the 1-based plan step it served; None for a new lead

    @property
    def cited(self) -> bool:
        """The agent finished and cited something: its step has findings (the orchestrator's next
        turn and the report's confidence both ask this)."""
        return self.status == "done" and bool(cited_numbers(self.report))


@dataclass
class RunState:
    """Everything one run knows. Passed explicitly to every step; nothing global."""

    run_id: str
    request: ResearchRequest
    settings: Settings
    emitter: Emitter
    gateway: LLMGateway
    toolbox: Toolbox
    clock: Clock
    deadlines: RunDeadlines
    unsafe_url: UnsafeUrlCheck
    turn: int = 0
    plan: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    registry: SourceRegistry = field(default_factory=SourceRegistry)
    citations: Numbering = field(default_factory=Numbering)
    url_cache: OnceCache[str, Page] = field(default_factory=OnceCache)
    query_cache: OnceCache[str, SearchOutcome] = field(default_factory=OnceCache)
    totals: Tokens = field(default_factory=Tokens)
    tasks_total: int = 0
    tasks_done: int = 0
    report_draft: str = ""
    report_started: bool = False
    agent_tasks: set[asyncio.Task[object]] = field(default_factory=set)
    pace: Pace = field(default_factory=Pace)
    tally: RunTally = field(default_factory=RunTally)
    published: Report | None = None  # the `report` packet, once sent
    tool_documents: dict[str, ToolDocument] = field(default_factory=dict)  # MCP results read, by URL
    snapshot: Snapshot | None = None  # a scheduled run's, once its report is checked
    changes: ChangeSet | None = None  # since the schedule's previous run
    _reasoning: bool | None = field(default=None, init=False, repr=False)
    _limits: ModeLimits | None = field(default=None, init=False, repr=False)

    @property
    def reasoning_model(self) -> bool:
        """Whether the orchestrator model reasons natively; asked of litellm on first use, which is
        after the run has started (a CLI run sends `run_start` while litellm is still loading)."""
        if self._reasoning is None:
            self._reasoning = supports_reasoning(self.settings.model_for("orchestrator"), self.settings.reasoning)
        return self._reasoning

    @property
    def limits(self) -> ModeLimits:
        if self._limits is None:
            self._limits = mode_limits(self.settings, self.mode, self.reasoning_model)
        return self._limits

    @property
    def max_cycles(self) -> int:
        return self.limits.max_cycles

    @property
    def agent_max_cycles(self) -> int:
        return self.limits.agent_max_cycles

    @property
    def lanes(self) -> int:
        return self.limits.lanes

    @property
    def agents_left(self) -> int | None:
        """Agents this run may still start; None when only cycles and lanes limit them."""
        cap = self.limits.max_agents
        return None if cap is None else max(0, cap - self.tasks_total)

    def time_left(self) -> float:
        """Seconds of the time budget left, now."""
        return self.deadlines.time_left(self.clock.now())

    @property
    def mode(self) -> Mode:
        return self.request.mode or self.settings.mode

    @property
    def today(self) -> str:
        return dt.date.today().isoformat()

    def new_turn(self) -> int:
        self.turn += 1
        return self.turn

    def emit(self, obj: PacketObj, *, turn: int | None = None, tab: int = 0, sub: int | None = None) -> None:
        self.emitter.emit(
            Placement(turn_index=self.turn if turn is None else turn, tab_index=tab, sub_turn_index=sub), obj
        )

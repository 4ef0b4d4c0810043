"""Runs as server-side tasks, independent of any HTTP connection.

The manager hands a run to its executor (engine processes), owns its `RunChannel` while it is
live, persists its outcome when it ends, cancels it on request, and at shutdown ends what is
still running as interrupted. Closing a browser only ends that browser's SSE generator; the run
goes on. Public methods run on the server's event loop; the executor's messages arrive on its
reader threads and are bounced onto the loop, except packets, which go straight to the
(thread-safe) packet writer.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from sleuth.config import Settings
from sleuth.core.ids import new_id
from sleuth.core.logs import log_run_event
from sleuth.research.planning.review import PlanAnswer
from sleuth.runs.channel import RunChannel
from sleuth.runs.engine_pool import EnginePool
from sleuth.runs.executor import RunEvents, RunExecutor
from sleuth.runs.messages import Engine, McpStates, Ready, RunDone, ToolRead
from sleuth.runs.service import PlanDelivery, SessionBusy, TooManyRuns, new_run
from sleuth.store.packet_writer import PacketWriter, StoredPacket
from sleuth.store.records import MessageRecord, RunKind, RunRecord, RunStatus, now_iso
from sleuth.store.recovery import CANCELLED_REPLY, SHUTDOWN_MESSAGE, end_run_as_interrupted, recover_orphaned_runs
from sleuth.store.store import Store
from sleuth.stream.results import ResearchRequest, ResearchResult
from sleuth.tools.mcp.hub import ServerState

ENGINE_EXIT_MESSAGE = "interrupted: the engine process exited"

__all__ = ["Engine", "RunManager", "SessionBusy", "TooManyRuns"]

log = logging.getLogger(__name__)


@dataclass
class LiveRun:
    record: RunRecord
    channel: RunChannel
    done: asyncio.Future[None]  # resolves once the outcome is stored
    cancel_requested: bool = False
    finishing: bool = False  # its `RunDone` arrived; an engine exit must not end it a second time
    open_review: int | None = None  # seq of the open `plan_review` while no answer has been sent


class RunManager:
    def __init__(
        self,
        settings: Settings,
        store: Store,
        *,
        max_runs: int,
        engine: Engine,
        executor: Callable[[RunEvents], RunExecutor] | None = None,
        recover: Callable[[], Awaitable[list[str]]] | None = None,
    ) -> None:
        """`executor` builds where runs execute from the events it must report; by default
        `SLEUTH_ENGINE_PROCESSES` engine processes on this machine. `recover` ends the runs a dead
        process left behind at start (their ids); by default those whose owner process is gone."""
        self._settings = settings
        self._store = store
        self._max_runs = max_runs
        self._engine = engine
        self._live: dict[str, LiveRun] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._writer = PacketWriter(store.database, self._on_commit_threadsafe)
        events = RunEvents(
            on_packet=self._on_packet,
            on_done=self._on_done_threadsafe,
            on_exit=self._on_engine_exit_threadsafe,
            on_ready=self._on_ready_threadsafe,
            on_mcp=self._on_mcp,
            on_tool=self._on_tool_threadsafe,
        )
        self._model_check: asyncio.Future[str | None] | None = None  # the first engine's, once it is warm
        self._mcp_states: tuple[ServerState, ...] | None = None  # the engines' latest word on their MCP servers
        self._keeping: set[asyncio.Future[None]] = set()  # tools' results being stored mid-run
        self._warmed: asyncio.Future[None] | None = None  # resolved by the next engine to warm up
        if executor is None:
            self._executor: RunExecutor = EnginePool(settings, engine, events, processes=settings.engine_processes)
        else:
            self._executor = executor(events)
        self._recover = recover
        self._shutting_down = False

    # -- lifecycle --------------------------------------------------------------------------

    async def start(self) -> list[str]:
        """Start the writer and the engines (they warm up meanwhile); end runs a dead process left
        behind (their ids)."""
        self._loop = asyncio.get_running_loop()
        self._model_check = self._loop.create_future()
        self._writer.start()
        self._executor.start()
        if self._recover is not None:
            recovered = await self._recover()
        else:
            recovered = await asyncio.to_thread(recover_orphaned_runs, self._store, default_mode=self._settings.mode)
        for run_id in recovered:
            log_run_event("run_interrupted", run_id, reason="server restart")
        return recovered

    async def shutdown(self, grace_s: float = 5.0) -> None:
        """Stop every live run; each ends as interrupted (replayable), then the workers stop."""
        self._shutting_down = True
        live = list(self._live.values())
        for run in live:
            run.channel.frozen = True  # the engine's own `stop cancelled` is not what happened
        await asyncio.to_thread(self._executor.stop, grace_s)
        pending = [run.done for run in live if not run.done.done()]
        if pending:
            await asyncio.wait(pending, timeout=grace_s)
        await self._writer.flush()
        for run in live:
            if not run.done.done():  # its `RunDone` never came: end it here
                await self._interrupt(run, SHUTDOWN_MESSAGE)
                self._release(run)
        self._writer.close()

    # -- queries ----------------------------------------------------------------------------

    async def model_problem(self) -> str | None:
        """The engines' model check: why the configured models cannot be called, None when they can.
        Waits for the first engine to warm up (after `start`)."""
        assert self._model_check is not None, "start() first"
        return await asyncio.shield(self._model_check)

    async def mcp_states(self) -> tuple[ServerState, ...] | None:
        """The MCP servers as the engine that spoke last sees them; None until one has started them."""
        return self._mcp_states

    @property
    def active_count(self) -> int:
        return len(self._live)

    @property
    def max_runs(self) -> int:
        return self._max_runs

    @property
    def executor(self) -> RunExecutor:
        return self._executor

    def channel(self, run_id: str) -> RunChannel | None:
        live = self._live.get(run_id)
        return live.channel if live else None

    def session_busy(self, session_id: str) -> bool:
        return any(run.record.session_id == session_id for run in self._live.values())

    # -- RunService (what the routes call) ----------------------------------------------------

    async def active_runs(self) -> int:
        return len(self._live)

    async def session_in_use(self, session_id: str) -> bool:
        return self.session_busy(session_id)

    def readiness(self) -> tuple[int, int]:
        return self._executor.readiness()

    async def until_warm(self) -> None:
        # An engine's readiness is set before its `Ready` is bounced onto this loop, so a `Ready`
        # that arrives after this look resolves the future it waits on: no wake-up is lost.
        while True:
            ready, total = self._executor.readiness()
            if ready >= total:
                return
            if self._warmed is None or self._warmed.done():
                self._warmed = asyncio.get_running_loop().create_future()
            await asyncio.shield(self._warmed)

    async def open_channel(self, run_id: str) -> RunChannel | None:
        return self.channel(run_id)

    async def deliver_plan_answer(self, run_id: str, answer: PlanAnswer) -> PlanDelivery:
        return self.answer_plan(run_id, answer)

    # -- starting and cancelling ------------------------------------------------------------

    async def launch(
        self,
        request: ResearchRequest,
        *,
        session_id: str,
        kind: RunKind,
        answers_run_id: str | None,
        message: MessageRecord | None,
        new_session_title: str | None = None,
        owner_id: str | None = None,
    ) -> RunRecord:
        """Register, persist and start a run. Raises TooManyRuns / SessionBusy before writing anything.

        With `new_session_title` the session is created in the run's own transaction, so a refused
        run leaves no empty session behind.
        """
        if self._shutting_down or len(self._live) >= self._max_runs:
            raise TooManyRuns()
        if self.session_busy(session_id):
            raise SessionBusy()
        record, message = new_run(
            request, session_id=session_id, kind=kind, answers_run_id=answers_run_id, message=message
        )
        # Registered before the first await so concurrent requests count it against the limit.
        live = LiveRun(record=record, channel=RunChannel(record.id), done=asyncio.get_running_loop().create_future())
        self._live[record.id] = live
        try:
            await asyncio.to_thread(
                self._store.create_run, record, message, new_session_title=new_session_title, owner_id=owner_id
            )
        except BaseException:
            del self._live[record.id]
            raise
        try:
            self._executor.start_run(record.id, request)
        except OSError:  # the engine process just died; it is being replaced
            await self._interrupt(live, ENGINE_EXIT_MESSAGE)
            self._release(live)
        log_run_event("run_started", record.id, session_id=session_id, kind=kind, mode=request.mode)
        return record

    def adopt(self, record: RunRecord, request: ResearchRequest) -> tuple[RunChannel, asyncio.Future[None]]:
        """Execute a run whose record another process stored (a worker taking a queued run): its
        channel, and a future resolved once its outcome is stored."""
        live = LiveRun(record=record, channel=RunChannel(record.id), done=asyncio.get_running_loop().create_future())
        self._live[record.id] = live
        try:
            self._executor.start_run(record.id, request)
        except OSError:  # the engine process just died; it is being replaced
            asyncio.ensure_future(self._end_unstarted(live))
        log_run_event("run_started", record.id, session_id=record.session_id, kind=record.kind, mode=request.mode)
        return live.channel, live.done

    def abandon(self, run_id: str) -> None:
        """Another process has ended this run: store and send nothing more of it, and stop it."""
        live = self._live.get(run_id)
        if live is not None:
            live.channel.frozen = True
            self._executor.cancel(run_id)

    async def _end_unstarted(self, live: LiveRun) -> None:
        try:
            await self._interrupt(live, ENGINE_EXIT_MESSAGE)
        finally:
            self._release(live)

    async def cancel(self, run_id: str, wait_s: float | None = None) -> bool:
        """Cancel a live run and wait (at most `wait_s`, default `cancel_wait_s`) for it to end. False
        if it is not live here."""
        live = self._live.get(run_id)
        if live is None:
            return False
        if not live.cancel_requested:
            # Once only: a second cancel would interrupt the engine's own cancellation handling.
            live.cancel_requested = True
            self._executor.cancel(run_id)
            log_run_event("run_cancel_requested", run_id)
        timeout = self._settings.cancel_wait_s if wait_s is None else wait_s
        try:
            await asyncio.wait_for(asyncio.shield(live.done), timeout=timeout)
        except TimeoutError:
            pass
        return True

    def open_review(self, run_id: str) -> int | None:
        """The seq of the plan review this live run waits on, if no answer has been sent to it."""
        live = self._live.get(run_id)
        return live.open_review if live is not None else None

    def answer_plan(self, run_id: str, answer: PlanAnswer) -> PlanDelivery:
        """Send the user's answer to a run waiting for plan review; one answer per review."""
        live = self._live.get(run_id)
        if live is None:
            return "not_live"
        if live.open_review is None or live.cancel_requested:
            return "not_waiting"
        live.open_review = None
        try:
            self._executor.answer_plan(run_id, answer)
        except OSError:
            return "not_live"
        log_run_event("plan_answered", run_id, approve=answer.approve, edited=answer.steps is not None)
        return "sent"

    # -- messages from the engine ---------------------------------------------------------------

    def _on_packet(self, packet: StoredPacket) -> None:
        """Engine reader thread: queue the packet for commit (dict reads are atomic)."""
        live = self._live.get(packet.run_id)
        if live is not None and not live.channel.frozen:
            if packet.type in ("plan_review", "plan_reviewed"):
                live.open_review = packet.seq if packet.type == "plan_review" else None
            self._writer.submit(packet)

    def _on_done_threadsafe(self, done: RunDone) -> None:
        self._call_on_loop(lambda: asyncio.ensure_future(self._finish(done)))

    def _on_ready_threadsafe(self, ready: Ready) -> None:
        self._call_on_loop(lambda: self._engine_checked(ready.model_problem))

    def _on_tool_threadsafe(self, read: ToolRead) -> None:
        self._call_on_loop(lambda: self._keep_tool_document(read))

    def _keep_tool_document(self, read: ToolRead) -> None:
        """Store what a tool returned while its run goes on: the viewer opens it at once."""
        live = self._live.get(read.run_id)
        if live is None:  # the run has ended: its result stores the same document
            return
        keep = asyncio.to_thread(self._store.keep_tool_document, read.run_id, live.record.session_id, read.document)
        task = asyncio.ensure_future(keep)
        self._keeping.add(task)
        task.add_done_callback(self._kept)

    def _kept(self, task: asyncio.Future[None]) -> None:
        self._keeping.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.warning("a tool's result could not be kept for the viewer: %s", task.exception())

    def _on_mcp(self, message: McpStates) -> None:
        """Engine reader thread: one assignment, read whole by the loop."""
        self._mcp_states = message.servers

    def _engine_checked(self, problem: str | None) -> None:
        if self._model_check is not None and not self._model_check.done():
            self._model_check.set_result(problem)
        if self._warmed is not None and not self._warmed.done():
            self._warmed.set_result(None)

    def _on_engine_exit_threadsafe(self, run_ids: list[str]) -> None:
        self._call_on_loop(lambda: asyncio.ensure_future(self._engine_exited(run_ids)))

    def _call_on_loop(self, callback: Callable[[], object]) -> None:
        loop = self._loop
        if loop is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(callback)
            except RuntimeError:
                pass  # loop closed between the check and the call: nobody is listening anyway

    async def _finish(self, done: RunDone) -> None:
        live = self._live.get(done.run_id)
        if live is None or live.finishing:
            return
        live.finishing = True
        try:
            await self._writer.flush()  # every packet of the run was queued before its `RunDone` arrived
            if live.channel.frozen:
                await self._interrupt(live, SHUTDOWN_MESSAGE)
            else:
                await asyncio.to_thread(
                    self._persist_outcome, live.record, done.stop_reason, done.result(), done.error, done.cancelled
                )
        finally:
            self._release(live)

    async def _engine_exited(self, run_ids: list[str]) -> None:
        """An engine process died (killed, out of memory): the runs it held end as interrupted.
        The executor has already replaced it; runs in other processes are not affected."""
        if self._shutting_down:
            return
        lost = [live for live in (self._live.get(run_id) for run_id in run_ids) if live and not live.finishing]
        for live in lost:
            live.channel.frozen = True  # nothing more from that process may be stored
        await self._writer.flush()  # its packets read before the exit are stored first
        for live in lost:
            try:
                await self._interrupt(live, ENGINE_EXIT_MESSAGE)
            finally:
                self._release(live)
            log_run_event("run_interrupted", live.record.id, reason="engine process exited")

    async def _interrupt(self, live: LiveRun, message: str) -> None:
        """End a live run with `error` + `stop` (after a `run_start` if it had none) written directly,
        and show them to its watchers."""
        appended = await asyncio.to_thread(
            end_run_as_interrupted, self._store, live.record, message, default_mode=self._settings.mode
        )
        live.channel.mark_committed(appended)

    def _release(self, live: LiveRun) -> None:
        live.channel.mark_finished()
        self._live.pop(live.record.id, None)
        if not live.done.done():
            live.done.set_result(None)

    def _persist_outcome(
        self,
        record: RunRecord,
        stop_reason: str | None,
        result: ResearchResult | None,
        error: str | None,
        cancelled: bool,
    ) -> None:
        status: RunStatus
        if cancelled or stop_reason == "cancelled":
            status, content = "cancelled", CANCELLED_REPLY
        elif result is None:
            status, content = "error", error or "The run failed."
        else:
            status = result.status
            if result.status == "waiting_for_input":
                content = "\n".join(result.clarification_questions)
            elif result.status == "completed":
                content = result.markdown or result.summary
            else:
                content = result.error or "The run failed."
        reply = MessageRecord(
            id=new_id("m"),
            session_id=record.session_id,
            role="assistant",
            content=content,
            run_id=record.id,
            created_at=now_iso(),
        )
        self._store.finish_run(
            record.id,
            status=status,
            stop_reason=stop_reason,
            report_id=result.report_id if result else None,
            error=(result.error if result else error),
            assistant_message=reply,
            clarification_questions=result.clarification_questions if result else [],
            result=result,
            session_id=record.session_id,
        )
        log_run_event(
            "run_finished",
            record.id,
            status=status,
            stop_reason=stop_reason,
            input_tokens=result.input_tokens if result else 0,
            output_tokens=result.output_tokens if result else 0,
        )

    # -- commits from the writer thread -----------------------------------------------------

    def _on_commit_threadsafe(self, batch: list[StoredPacket]) -> None:
        loop = self._loop
        if loop is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(self._on_commit, batch)
            except RuntimeError:
                pass  # loop closed between the check and the call: nobody is listening anyway

    def _on_commit(self, batch: list[StoredPacket]) -> None:
        by_run: dict[str, list[StoredPacket]] = {}
        for packet in batch:
            by_run.setdefault(packet.run_id, []).append(packet)
        for run_id, packets in by_run.items():
            live = self._live.get(run_id)
            if live is not None:
                live.channel.mark_committed(packets)

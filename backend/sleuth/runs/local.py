"""A research run in this process, the one way to make one (the CLI's `research` and `ask`,
`sleuth eval`, the test kit): run it, and keep it in the store."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Coroutine
from typing import Any, TypeVar

from sleuth.config import Settings
from sleuth.core.clock import Clock
from sleuth.core.ids import new_id, new_run_id
from sleuth.research.planning.review import PlanReviewer
from sleuth.research.preflight import LOCAL_CHECKS, PreflightError, preflight
from sleuth.research.run import run_research
from sleuth.store.records import MessageRecord, RunRecord, now_iso, session_title
from sleuth.store.recovery import this_host
from sleuth.store.store import Store
from sleuth.stream.emitter import Emitter, PacketSink
from sleuth.stream.packets import Packet
from sleuth.stream.results import ResearchRequest, ResearchResult
from sleuth.tools.factory import build_toolbox
from sleuth.tools.mcp.hub import close_loop_hub
from sleuth.tools.toolbox import Toolbox

T = TypeVar("T")


def run(main: Coroutine[Any, Any, T], slow_callback_ms: float | None = None) -> T:
    """Run `main` on a new event loop.

    With `slow_callback_ms`, asyncio's debug mode logs every callback that holds the loop that long
    (a "Executing ... took N seconds" warning on stderr): a step that long stalls every lane of the run.
    """
    with asyncio.Runner(debug=True if slow_callback_ms is not None else None) as runner:
        if slow_callback_ms is not None:
            runner.get_loop().slow_callback_duration = slow_callback_ms / 1000
        try:
            return runner.run(main)
        finally:
            # The MCP servers its runs started are closed by their owner, on the same loop, not left
            # to the loop's teardown (which would cancel them mid-shutdown).
            runner.run(close_loop_hub())


class RunRefused(Exception):
    """The request cannot run here (a failed preflight, unknown sources): one line for the user."""


async def run_request(
    request: ResearchRequest,
    settings: Settings,
    sink: PacketSink,
    reviewer: PlanReviewer | None = None,
    run_id: str | None = None,
    kept: list[Packet] | None = None,
    *,
    checked: bool = True,
    clock: Clock | None = None,
    toolbox: Toolbox | None = None,
) -> ResearchResult:
    """Run `request` on this event loop, every packet to `sink` (and to `kept`, to be saved).

    `checked` (a run nothing has checked yet: the CLI's): refuse up front what preflight can tell,
    and check the models once litellm has loaded. Unchecked, the run goes as in an engine process,
    whose server has checked the request: `sleuth eval` checks once for all its questions, and the
    test kit drives the engine past a preflight. `toolbox` defaults to the one the request's sources
    name; `clock` to the system's."""
    if checked:
        try:
            preflight(settings, request, LOCAL_CHECKS)  # the models are checked once litellm has loaded
        except PreflightError as exc:
            raise RunRefused(str(exc)) from None
    if toolbox is None:
        try:
            toolbox = build_toolbox(settings, request.sources, owner_id=request.owner_id)
        except ValueError as exc:
            raise RunRefused(str(exc)) from None
    sinks: list[PacketSink] = [sink]
    if kept is not None:
        sinks.append(kept.append)
    emitter = Emitter(run_id or new_run_id(), sinks)
    return await run_research(
        request, settings, emitter, clock=clock, toolbox=toolbox, reviewer=reviewer, check_models=checked
    )


def save_report(
    settings: Settings, request: ResearchRequest, result: ResearchResult, run_id: str, packets: list[Packet]
) -> None:
    """Keep a run of this process in the store, packets too: `sleuth export`, `sleuth ask` and the web UI find it."""
    store = Store.from_settings(settings)
    try:
        if store.get_session(request.session_id) is None:
            store.create_session(request.session_id, session_title(request.question))
        question = MessageRecord(
            id=new_id("m"),
            session_id=request.session_id,
            role="user",
            content=request.question,
            run_id=run_id,
            created_at=now_iso(),
        )
        record = RunRecord(
            id=run_id,
            session_id=request.session_id,
            question=request.question,
            kind="question",
            status="running",
            owner_host=this_host(),
            owner_pid=os.getpid(),
            created_at=now_iso(),
            message_id=question.id,
            mode=request.mode,
        )
        store.create_run(record, question)
        now = time.time()
        store.insert_packets((run_id, p.seq, p.obj.type, now, p.model_dump_json()) for p in packets)
        reply = MessageRecord(
            id=new_id("m"),
            session_id=request.session_id,
            role="assistant",
            content=result.markdown,
            run_id=run_id,
            created_at=now_iso(),
        )
        store.finish_run(
            run_id,
            status=result.status,
            stop_reason=result.stop_reason,
            report_id=result.report_id,
            assistant_message=reply,
            result=result,
            session_id=request.session_id,
        )
    finally:
        store.close()

"""The engine entry point: one research run, from question to verified report."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field

from sleuth.config import Role, Settings
from sleuth.core.clock import Clock, DeadlineReached, SystemClock, run_until
from sleuth.llm.gateway import LLMGateway, ModelAccessError
from sleuth.llm.prompting import render
from sleuth.llm.runtime import is_offline, litellm_ready
from sleuth.research.lanes.orchestrator import orchestrate
from sleuth.research.planning.clarify import clarify
from sleuth.research.planning.context import bounded_conversation
from sleuth.research.planning.plan import make_plan
from sleuth.research.planning.review import AutoApprove, PlanReviewer, review_plan
from sleuth.research.preflight import model_problem
from sleuth.research.report.artifact import report_title
from sleuth.research.report.citations import VerifiedReport
from sleuth.research.report.final import fallback_report, publish_report, start_report, write_report
from sleuth.research.report.followup import FollowupAnswer, answer_followup
from sleuth.research.state import RunState
from sleuth.research.time.deadlines import RunDeadlines
from sleuth.stream.emitter import Emitter
from sleuth.stream.packets import Degraded, Error, Placement, RunStart, SourceRouteInfo, StopReason, Summary
from sleuth.stream.results import ResearchRequest, ResearchResult, ResultStatus
from sleuth.tools.factory import build_toolbox
from sleuth.tools.toolbox import Toolbox
from sleuth.tools.web.credibility import is_unsafe_citation_url

log = logging.getLogger(__name__)

ROLES: tuple[Role, ...] = ("planner", "orchestrator", "researcher", "report")


@dataclass
class _Outcome:
    reason: StopReason
    report: VerifiedReport | None = None
    questions: list[str] = field(default_factory=list)
    error: str | None = None
    followup: FollowupAnswer | None = None


def _model_label(model: str) -> str:
    return f"{model} (extractive, offline)" if is_offline(model) else model


def new_state(
    request: ResearchRequest, settings: Settings, emitter: Emitter, clock: Clock, toolbox: Toolbox
) -> RunState:
    mode = request.mode or settings.mode
    state = RunState(
        run_id=emitter.run_id,
        request=bounded_conversation(request, settings.history_max_tokens),
        settings=settings,
        emitter=emitter,
        gateway=LLMGateway(settings, clock),
        toolbox=toolbox,
        clock=clock,
        deadlines=RunDeadlines.start(settings, clock.now(), request.time_budget_s or settings.time_budget_for(mode)),
        unsafe_url=is_unsafe_citation_url,
    )
    emitter.add_sink(state.tally.observe)
    return state


async def _tool_notices(state: RunState) -> None:
    """A `degraded` notice for every MCP server the run cannot use (the file's own problem too).
    Servers start with the process, each bounded by its start-up timeout, so this rarely waits."""
    hub = state.toolbox.mcp
    if hub is None:
        return
    await hub.started()
    if hub.problem:
        state.emit(Degraded(level="tool_unavailable", detail=hub.problem))
    for status in hub.unavailable():
        state.emit(
            Degraded(level="tool_unavailable", detail=f"MCP server {status.name} is unavailable: {status.reason}")
        )


async def _pipeline(state: RunState, reviewer: PlanReviewer | None, check_models: bool) -> _Outcome:
    await litellm_ready()  # a CLI run starts while litellm is still loading on another thread
    await _tool_notices(state)
    if check_models:
        problem = await asyncio.to_thread(model_problem, state.settings)
        if problem:
            raise ModelAccessError(problem)
    request = state.request
    if request.followup is not None:
        return _Outcome(reason="completed", followup=await answer_followup(state, request.followup))
    wants_clarify = state.settings.clarify if request.clarify is None else request.clarify
    if wants_clarify and request.clarification is None:
        questions = await clarify(state)
        if questions:
            return _Outcome(reason="clarification", questions=questions)
    await make_plan(state)
    if request.review_plan:
        await review_plan(state, reviewer or AutoApprove())
    if await orchestrate(state) == "error":
        return _Outcome(reason="error", error="The orchestrator could not start the research.")
    return _Outcome(reason="completed", report=await write_report(state))


async def _cancel_agents(state: RunState) -> None:
    for task in list(state.agent_tasks):
        task.cancel()
    await asyncio.gather(*state.agent_tasks, return_exceptions=True)


def _result(state: RunState, outcome: _Outcome) -> ResearchResult:
    if outcome.followup is not None:
        return _followup_result(state, outcome.followup)
    report = outcome.report
    published = state.published if report else None
    statuses: dict[StopReason, ResultStatus] = {
        "completed": "completed",
        "deadline": "completed",
        "clarification": "waiting_for_input",
    }
    return ResearchResult(
        status=statuses.get(outcome.reason, "error"),
        stop_reason=outcome.reason,
        report_id=state.request.report_id if report else None,
        question=state.request.question,
        title=published.title if published else report_title(state.request.question),
        summary=published.summary if published else "",
        key_findings=published.key_findings if published else [],
        method=published.method if published else None,
        markdown=report.markdown if report else "",
        sources=report.sources if report else [],
        removed_citations=report.removed if report else [],
        claims=report.claims if report else [],
        clarification_questions=outcome.questions,
        plan=state.plan,
        error=outcome.error,
        elapsed_s=round(state.clock.now() - state.deadlines.started_at, 3),
        input_tokens=state.totals.input_tokens,
        output_tokens=state.totals.output_tokens,
        cost_usd=round(state.totals.cost_usd, 6),
        tool_documents=list(state.tool_documents.values()),
        changes=state.changes if report else None,
        snapshot=state.snapshot if report else None,
    )


def _followup_result(state: RunState, answer: FollowupAnswer) -> ResearchResult:
    """A follow-up is a reply in the conversation, not a new report: no report id, the answer as markdown."""
    return ResearchResult(
        status="completed",
        stop_reason="completed",
        question=state.request.question,
        title=report_title(state.request.question),
        markdown=answer.markdown,
        sources=answer.cited,
        elapsed_s=round(state.clock.now() - state.deadlines.started_at, 3),
        input_tokens=state.totals.input_tokens,
        output_tokens=state.totals.output_tokens,
        cost_usd=round(state.totals.cost_usd, 6),
    )


def _finish(state: RunState, outcome: _Outcome) -> ResearchResult:
    result = _result(state, outcome)
    state.emit(
        Summary(
            elapsed_s=max(0.0, result.elapsed_s),
            sources_seen=state.registry.seen,
            sources_fetched=state.registry.fetched,
            sources_cited=len(result.sources),
            input_tokens=result.input_tokens,
            output_tokens=result.output_tokens,
            cost_usd=result.cost_usd,
            report_id=result.report_id,
            claims_checked=len(result.claims),
            claims_unsupported=len(result.unsupported_claims),
        )
    )
    state.emitter.stop(Placement(turn_index=state.turn), outcome.reason)
    return result


def _routing_text(request: ResearchRequest) -> str:
    """What the run is about, for routing: the user's answer to clarifying questions adds to the question."""
    if request.clarification is not None:
        return f"{request.question}\n{request.clarification.answer}"
    return request.question


async def run_research(
    request: ResearchRequest,
    settings: Settings,
    emitter: Emitter,
    *,
    clock: Clock | None = None,
    toolbox: Toolbox | None = None,
    reviewer: PlanReviewer | None = None,
    check_models: bool = False,
) -> ResearchResult:
    """Run one research request, emitting every packet through `emitter`; always ends with `stop`.

    `check_models`: check that the models can be called (known to litellm, keys present) after
    `run_start` rather than before it, for a caller that has not loaded litellm yet (the CLI); a
    problem ends the run with an error packet before any model call.

    The run cannot outlive its deadline (the effective time budget): at the deadline all work is cancelled
    and the report is assembled from what exists. Cancelling the task running this coroutine ends
    the run with stop reason `cancelled` (and re-raises CancelledError).
    """
    clock = clock or SystemClock()
    if toolbox is None:
        toolbox = build_toolbox(settings, request.sources, owner_id=request.owner_id)
    # Searches go to the collections that fit what is asked (when the request chose none).
    toolbox = toolbox.for_question(_routing_text(request))
    state = new_state(request, settings, emitter, clock, toolbox)
    state.emit(
        RunStart(
            session_id=request.session_id,
            question=request.question,
            mode=request.mode_label(settings.mode),
            models={
                role: _model_label(settings.model_for(role))
                for role in ROLES + (("judge",) if settings.judge_model else ())
            },
            time_budget_s=state.deadlines.time_budget_s,
            sources=toolbox.sources,
            routes=[SourceRouteInfo(name=r.name, searched=r.searched, reason=r.reason) for r in toolbox.routes],
        )
    )
    try:
        outcome = await run_until(clock, lambda: state.deadlines.deadline_at, _pipeline(state, reviewer, check_models))
    except DeadlineReached:
        await _cancel_agents(state)
        state.emit(
            Degraded(
                level="deadline", detail="The run reached its hard deadline; the report uses what was written so far."
            )
        )
        start_report(state)
        text = (
            state.report_draft
            if state.report_draft.strip()
            else fallback_report(state, render("responses/deadline_note"))
        )
        outcome = _Outcome(reason="deadline", report=await publish_report(state, text, allow_judge=False))
    except asyncio.CancelledError:
        await _cancel_agents(state)
        _finish(state, _Outcome(reason="cancelled"))
        raise
    except ModelAccessError as exc:  # a settings problem, not a bug: one clear message, no traceback
        await _cancel_agents(state)
        message = str(exc)
        state.emit(Error(message=message[:1].upper() + message[1:], recoverable=False))
        outcome = _Outcome(reason="error", error=str(exc))
    except Exception as exc:  # a bug must still end the run cleanly for every client
        log.exception("run %s failed", state.run_id)
        await _cancel_agents(state)
        state.emit(Error(message=f"Internal error: {type(exc).__name__}: {exc}", recoverable=False))
        outcome = _Outcome(reason="error", error=str(exc))
    return _finish(state, outcome)

"""Starting a run from a user message: limits, conversation logic, then the RunManager."""

from __future__ import annotations

import asyncio

from fastapi import HTTPException, Request

from sleuth.api.routes.deps import manager_of, model_checks_of, settings_of, store_of
from sleuth.api.schemas import RunCreated
from sleuth.config import Mode
from sleuth.core.ids import new_id
from sleuth.core.text import message_too_long
from sleuth.research.preflight import LOCAL_CHECKS, PreflightError, preflight
from sleuth.runs.requests import NoReport, PlannedRun, followup_request, plan_run
from sleuth.runs.service import SessionBusy, TooManyRuns
from sleuth.store.records import MessageRecord, now_iso, session_title
from sleuth.stream.results import PriorReport, ResearchRequest
from sleuth.tools import sources


def check_length(request: Request, text: str) -> None:
    problem = message_too_long(text, settings_of(request).max_message_chars)
    if problem is not None:
        raise HTTPException(status_code=413, detail=problem)


async def check_capacity(request: Request, session_id: str | None = None) -> None:
    manager = manager_of(request)
    if await manager.active_runs() >= manager.max_runs:
        raise too_many(request)
    if session_id is not None and await manager.session_in_use(session_id):
        raise busy()


async def check_preflight(request: Request, research: ResearchRequest) -> None:
    """Refuse, before anything is stored, a run that the settings would make fail."""
    try:
        # The local checks first, as the CLI makes them: they need no litellm, so a refusal for
        # them never waits for its import just after the server starts.
        await asyncio.to_thread(preflight, settings_of(request), research, LOCAL_CHECKS)
        problem = await model_checks_of(request).problem()
        if problem is not None:
            raise PreflightError(problem)
    except PreflightError as exc:
        raise HTTPException(status_code=400, detail=f"research cannot start: {exc}") from None


def too_many(request: Request) -> HTTPException:
    return HTTPException(
        status_code=429,
        detail=f"the server is running its maximum of {manager_of(request).max_runs} runs; retry later",
        headers={"Retry-After": str(settings_of(request).retry_after_s)},
    )


def busy() -> HTTPException:
    return HTTPException(status_code=409, detail="this session already has a run in progress; wait or cancel it")


def chosen_sources(names: list[str] | None) -> list[str] | None:
    """The request's source names, cleaned; whether they exist is preflight's check."""
    return None if names is None else sources.clean_names(names)


async def start_run(
    request: Request,
    session_id: str,
    content: str,
    *,
    mode: Mode | None,
    clarify: bool | None,
    new_session: bool = False,
    time_budget_s: float | None = None,
    chosen: list[str] | None = None,
    review_plan: bool = False,
    followup: bool = False,
    report_id: str | None = None,
    prior: list[PriorReport] | None = None,
) -> RunCreated:
    """Start a run for `content` in `session_id`; with `new_session`, the session is created with the run."""
    store = store_of(request)
    if followup:
        try:
            asked = await asyncio.to_thread(followup_request, store, session_id, content, report_id)
        except NoReport:
            raise HTTPException(
                status_code=409, detail="there is no finished report in this session to ask about"
            ) from None
        planned = PlannedRun(request=asked, kind="question")
    else:
        planned = await asyncio.to_thread(
            plan_run,
            store,
            session_id,
            content,
            mode=mode,
            clarify=clarify,
            time_budget_s=time_budget_s,
            sources=chosen,
            prior=prior,
        )
    planned.request.review_plan = review_plan
    await check_preflight(request, planned.request)
    message = MessageRecord(
        id=new_id("m"), session_id=session_id, role="user", content=content, run_id=None, created_at=now_iso()
    )
    try:
        record = await manager_of(request).launch(
            planned.request,
            session_id=session_id,
            kind=planned.kind,
            answers_run_id=planned.answers_run_id,
            message=message,
            new_session_title=session_title(content) if new_session else None,
        )
    except TooManyRuns:
        raise too_many(request) from None
    except SessionBusy:
        raise busy() from None
    if planned.kind == "question" and not followup and not new_session:
        await asyncio.to_thread(store.rename_session_if_untitled, session_id, session_title(content))
    return RunCreated(
        run_id=record.id, session_id=session_id, kind=record.kind, events_url=f"/api/runs/{record.id}/events"
    )

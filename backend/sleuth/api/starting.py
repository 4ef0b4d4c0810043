"""Starting a run from a user message, whoever asks (the HTTP routes, the MCP server): limits,
preflight, conversation logic, then the runs' owner. A refusal is `Refused`, which each caller
words in its own protocol."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from sleuth.api.refused import Refused
from sleuth.api.services import Services
from sleuth.config import Mode
from sleuth.core.ids import new_id
from sleuth.core.text import message_too_long
from sleuth.research.preflight import LOCAL_CHECKS, PreflightError, preflight
from sleuth.runs.requests import NoReport, PlannedRun, followup_request, plan_run
from sleuth.runs.service import SessionBusy, TooManyRuns
from sleuth.store.records import MessageRecord, RunRecord, now_iso, session_title
from sleuth.stream.results import PriorReport, ResearchRequest, Snapshot


def check_length(services: Services, text: str) -> None:
    problem = message_too_long(text, services.settings.max_message_chars)
    if problem is not None:
        raise Refused(413, problem)


async def check_capacity(services: Services, session_id: str | None = None) -> None:
    if await services.manager.active_runs() >= services.manager.max_runs:
        raise too_many(services)
    if session_id is not None and await services.manager.session_in_use(session_id):
        raise busy()


async def check_preflight(services: Services, research: ResearchRequest) -> None:
    """Refuse, before anything is stored, a run that the settings would make fail."""
    try:
        # The local checks first, as the CLI makes them: they need no litellm, so a refusal for
        # them never waits for its import just after the server starts.
        await asyncio.to_thread(preflight, services.settings, research, LOCAL_CHECKS)
        problem = await services.model_checks.problem()
        if problem is not None:
            raise PreflightError(problem)
    except PreflightError as exc:
        raise Refused(400, f"research cannot start: {exc}") from None


def too_many(services: Services) -> Refused:
    return Refused(
        429,
        f"the server is running its maximum of {services.manager.max_runs} runs; retry later",
        services.settings.retry_after_s,
    )


def busy() -> Refused:
    return Refused(409, "this session already has a run in progress; wait or cancel it")


@dataclass(frozen=True)
class Started:
    record: RunRecord
    session_id: str


async def start_run(
    services: Services,
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
    scheduled: bool = False,
    previous: Snapshot | None = None,
) -> Started:
    """Start a run for `content` in `session_id`; with `new_session`, the session is created with the run.

    `scheduled`: a schedule's run, researched without the session's earlier reports as history and
    compared with `previous` (its schedule's last snapshot) instead."""
    store = services.store
    if followup:
        try:
            asked = await asyncio.to_thread(followup_request, store, session_id, content, report_id)
        except NoReport:
            raise Refused(409, "there is no finished report in this session to ask about") from None
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
            with_history=not scheduled,
        )
    # Whose run this is decides which local collections it searches (tools/local/access.py): the
    # caller's, or, for the scheduler's unscoped store, the owner of the schedule's session.
    owner_id = store.owner
    if owner_id is None and not new_session:
        owner_id = await asyncio.to_thread(store.session_owner, session_id)
    planned.request.owner_id = owner_id
    planned.request.review_plan = review_plan
    planned.request.scheduled = scheduled
    planned.request.previous = previous
    await check_preflight(services, planned.request)
    message = MessageRecord(
        id=new_id("m"), session_id=session_id, role="user", content=content, run_id=None, created_at=now_iso()
    )
    try:
        record = await services.manager.launch(
            planned.request,
            session_id=session_id,
            kind=planned.kind,
            answers_run_id=planned.answers_run_id,
            message=message,
            new_session_title=session_title(content) if new_session else None,
            owner_id=store.owner,
        )
    except TooManyRuns:
        raise too_many(services) from None
    except SessionBusy:
        raise busy() from None
    if planned.kind == "question" and not followup and not new_session:
        await asyncio.to_thread(store.rename_session_if_untitled, session_id, session_title(content))
    return Started(record, session_id)

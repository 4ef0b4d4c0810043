"""One-shot research: a new session and its first run in one call."""

from __future__ import annotations

from fastapi import APIRouter, Request, status

from sleuth.api.routes.deps import responses
from sleuth.api.routes.launch import check_capacity, check_length, chosen_sources, start_run
from sleuth.api.schemas import ResearchCreate, RunCreated
from sleuth.core.ids import new_id

router = APIRouter(tags=["research"])


@router.post(
    "/research",
    status_code=status.HTTP_202_ACCEPTED,
    response_model=RunCreated,
    responses=responses(400, 401, 413, 429),
)
async def research(request: Request, body: ResearchCreate) -> RunCreated:
    check_length(request, body.question)
    await check_capacity(request)  # before creating a session that would stay empty
    # Preflight is `start_run`'s, before it stores anything (the session is created with the run).
    return await start_run(
        request,
        new_id("s"),
        body.question,
        mode=body.mode,
        clarify=body.clarify,
        time_budget_s=body.time_budget_s,
        chosen=chosen_sources(body.sources),
        review_plan=body.review_plan,
        new_session=True,
    )

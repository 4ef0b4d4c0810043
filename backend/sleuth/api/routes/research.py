"""One-shot research: a new session and its first run in one call."""

from __future__ import annotations

from fastapi import APIRouter, Request, status

from sleuth.api.routes.deps import responses
from sleuth.api.routes.launch import check_capacity, check_length, start_run
from sleuth.api.schemas import ResearchCreate, RunCreated
from sleuth.store.ids import new_id

router = APIRouter(tags=["research"])


@router.post(
    "/research", status_code=status.HTTP_202_ACCEPTED, response_model=RunCreated, responses=responses(401, 413, 429)
)
async def research(request: Request, body: ResearchCreate) -> RunCreated:
    check_length(request, body.question)
    check_capacity(request)
    session_id = new_id("s")
    return await start_run(request, session_id, body.question, mode=body.mode, clarify=body.clarify, new_session=True)

"""Sessions and their messages; a message starts a run."""

from __future__ import annotations

import asyncio

from fastapi import APIRouter, Query, Request, Response, status

from sleuth.api.routes.deps import Offset, not_found, responses, store_of
from sleuth.api.routes.launch import check_capacity, check_length, chosen_sources, start_run
from sleuth.api.schemas import (
    MessageCreate,
    MessageOut,
    RunCreated,
    RunOut,
    SessionCreate,
    SessionDetail,
    SessionOut,
    SessionUpdate,
)
from sleuth.audio.files import delete_session_data
from sleuth.core.ids import new_id

router = APIRouter(tags=["sessions"])


@router.post("/sessions", status_code=status.HTTP_201_CREATED, response_model=SessionOut, responses=responses(401))
async def create_session(request: Request, body: SessionCreate | None = None) -> SessionOut:
    title = " ".join((body.title if body else "").split())
    record = await asyncio.to_thread(store_of(request).create_session, new_id("s"), title)
    return SessionOut.model_validate(record)


@router.get("/sessions", response_model=list[SessionOut], responses=responses(401))
async def list_sessions(
    request: Request,
    limit: int = Query(50, ge=1, le=500),
    offset: Offset = 0,
    q: str | None = Query(None, max_length=200, description="Only sessions whose title contains this (any case)."),
) -> list[SessionOut]:
    records = await asyncio.to_thread(store_of(request).list_sessions, limit, offset, (q or "").strip() or None)
    return [SessionOut.model_validate(record) for record in records]


@router.patch("/sessions/{session_id}", response_model=SessionOut, responses=responses(401, 404))
async def rename_session(request: Request, session_id: str, body: SessionUpdate) -> SessionOut:
    record = await asyncio.to_thread(store_of(request).rename_session, session_id, " ".join(body.title.split()))
    if record is None:
        raise not_found("session", session_id)
    return SessionOut.model_validate(record)


@router.delete("/sessions/{session_id}", status_code=status.HTTP_204_NO_CONTENT, responses=responses(401, 404, 409))
async def delete_session(request: Request, session_id: str) -> Response:
    """Delete the session, its runs, their packets, its reports and their audio. Refused while a run is live."""
    # The store checks both (404, 409) in the deleting transaction, so a message racing the delete
    # either starts its run first (and the delete is refused) or finds the session gone.
    await delete_session_data(store_of(request), session_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.get("/sessions/{session_id}", response_model=SessionDetail, responses=responses(401, 404))
async def get_session(request: Request, session_id: str) -> SessionDetail:
    store = store_of(request)

    def load() -> SessionDetail | None:
        record = store.get_session(session_id)
        if record is None:
            return None
        return SessionDetail(
            **SessionOut.model_validate(record).model_dump(),
            messages=[MessageOut.model_validate(m) for m in store.list_messages(session_id)],
            runs=[RunOut.model_validate(r) for r in store.list_runs(session_id)],
        )

    detail = await asyncio.to_thread(load)
    if detail is None:
        raise not_found("session", session_id)
    return detail


@router.post(
    "/sessions/{session_id}/messages",
    status_code=status.HTTP_202_ACCEPTED,
    response_model=RunCreated,
    responses=responses(400, 401, 404, 409, 413, 429),
)
async def post_message(request: Request, session_id: str, body: MessageCreate) -> RunCreated:
    """Send a message. After a run that asked clarification questions, it is their answer."""
    check_length(request, body.content)
    if await asyncio.to_thread(store_of(request).get_session, session_id) is None:
        raise not_found("session", session_id)
    await check_capacity(request, session_id)
    chosen = chosen_sources(body.sources)
    return await start_run(
        request,
        session_id,
        body.content,
        mode=body.mode,
        clarify=body.clarify,
        time_budget_s=body.time_budget_s,
        chosen=chosen,
        review_plan=body.review_plan,
        followup=body.followup,
        report_id=body.report_id,
    )

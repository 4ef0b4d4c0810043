"""A run: its status, its packet stream (SSE), cancelling it."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

from fastapi import APIRouter, Header, HTTPException, Query, Request
from sse_starlette import EventSourceResponse

from sleuth.api.routes.deps import manager_of, not_found, responses, settings_of, store_of
from sleuth.api.schemas import CancelOut, PlanAnswerIn, PlanAnswerOut, RunOut
from sleuth.api.sse import packet_stream
from sleuth.research.planning.review import PlanAnswer

router = APIRouter(tags=["runs"])

MAX_SEQ = 2**62  # SQLite integers are 64-bit; anything larger cannot be a seq

SSE_DOC: dict[int | str, dict[str, Any]] = {
    200: {
        "description": (
            "Server-Sent Events: `event: packet`, `id: <seq>`, `data: <packet JSON>`; comments as heartbeats."
        ),
        "content": {"text/event-stream": {"schema": {"type": "string"}}},
    }
}


@router.get("/runs/{run_id}", response_model=RunOut, responses=responses(401, 404))
async def get_run(request: Request, run_id: str) -> RunOut:
    record = await asyncio.to_thread(store_of(request).get_run, run_id)
    if record is None:
        raise not_found("run", run_id)
    return RunOut.model_validate(record)


@router.get("/runs/{run_id}/events", response_class=EventSourceResponse, responses={**SSE_DOC, **responses(401, 404)})
async def run_events(
    request: Request,
    run_id: str,
    last_event_id: Annotated[
        str | None, Header(description="Resume after this seq (sent by EventSource on reconnect).")
    ] = None,
    after: Annotated[
        int | None, Query(ge=-1, le=MAX_SEQ, description="Resume after this seq, for clients that cannot set headers.")
    ] = None,
) -> EventSourceResponse:
    """Stream a run's packets: stored ones first, then live ones; closes after `stop`."""
    resume_after = _parse_last_event_id(last_event_id) if last_event_id not in (None, "") else after
    if await asyncio.to_thread(store_of(request).get_run, run_id) is None:
        raise not_found("run", run_id)
    stream = packet_stream(
        manager_of(request),
        store_of(request),
        run_id,
        after=-1 if resume_after is None else resume_after,
        heartbeat_s=settings_of(request).heartbeat_s,
    )
    # ping=0: heartbeats come from packet_stream, only while the run is quiet.
    return EventSourceResponse(stream, ping=0, headers={"Cache-Control": "no-cache"})


def _parse_last_event_id(value: str) -> int:
    try:
        seq = int(value.strip())
    except ValueError:
        seq = -2
    if not -1 <= seq <= MAX_SEQ:
        raise HTTPException(status_code=422, detail="Last-Event-ID must be a packet seq (an integer >= -1)")
    return seq


@router.post("/runs/{run_id}/plan", response_model=PlanAnswerOut, responses=responses(401, 404, 409))
async def answer_plan(request: Request, run_id: str, body: PlanAnswerIn) -> PlanAnswerOut:
    """Answer a run's `plan_review`: approve the plan, replace its steps, or ask for a revision."""
    if await asyncio.to_thread(store_of(request).get_run, run_id) is None:
        raise not_found("run", run_id)
    answer = PlanAnswer(
        approve=bool(body.approve),
        steps=tuple(body.steps) if body.steps is not None else None,
        feedback=body.feedback,
    )
    delivery = await manager_of(request).deliver_plan_answer(run_id, answer)
    if delivery != "sent":
        raise HTTPException(status_code=409, detail="this run is not waiting for a plan review")
    return PlanAnswerOut(run_id=run_id, accepted=True)


@router.post("/runs/{run_id}/cancel", response_model=CancelOut, responses=responses(401, 404))
async def cancel_run(request: Request, run_id: str) -> CancelOut:
    """Cancel a running run; it ends with `stop` reason `cancelled`. Ended runs are left as they are."""
    store = store_of(request)
    if await asyncio.to_thread(store.get_run, run_id) is None:
        raise not_found("run", run_id)
    cancelled = await manager_of(request).cancel(run_id)
    record = await asyncio.to_thread(store.get_run, run_id)
    if record is None:  # it had ended, and its session was deleted meanwhile
        raise not_found("run", run_id)
    return CancelOut(run_id=run_id, status=record.status, cancelled=cancelled)

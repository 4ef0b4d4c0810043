"""Schedules: a question asked again on a cron or an interval; each firing is a run in the schedule's session."""

from __future__ import annotations

import asyncio
from dataclasses import asdict
from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter, Request, Response, status

from sleuth.api.refused import Refused
from sleuth.api.routes.deps import not_found, responses, services_of, settings_of
from sleuth.api.routes.launch import chosen_sources
from sleuth.api.schedule_schemas import (
    FiringOut,
    ScheduleCreate,
    ScheduleCreated,
    ScheduleDetail,
    ScheduleOut,
    ScheduleRunStarted,
    ScheduleUpdate,
)
from sleuth.api.scheduling import run_now, schedules_of
from sleuth.schedules.specs import ScheduleError, ScheduleSpec, edited, new_schedule
from sleuth.store.schedules import ScheduleRecord, ScheduleStore

router = APIRouter(tags=["schedules"])


def _out(record: ScheduleRecord, schedules: ScheduleStore) -> ScheduleOut:
    last = _firings(schedules, record.id, limit=1)
    return ScheduleOut.model_validate({**_fields(record), "last_firing": last[0] if last else None})


def _firings(schedules: ScheduleStore, schedule_id: str, limit: int = 50) -> list[FiringOut]:
    """The schedule's firings, newest first, each with how its run stands and what it found changed."""
    firings = schedules.firings(schedule_id, limit=limit)
    outcomes = schedules.outcomes([f.run_id for f in firings if f.run_id])
    out: list[FiringOut] = []
    for firing in firings:
        outcome = outcomes.get(firing.run_id or "")
        extra: dict[str, Any] = {}
        if outcome is not None:
            extra = {"run_status": outcome.status, "report_id": outcome.report_id, "changes": outcome.changes}
        out.append(FiringOut.model_validate({**asdict(firing), **extra}))
    return out


def _fields(record: ScheduleRecord) -> dict[str, Any]:
    data = {name: getattr(record, name) for name in ScheduleOut.model_fields if hasattr(record, name)}
    data["webhook_secret_set"] = bool(record.webhook_secret)
    return data


def _refuse(exc: ScheduleError) -> Refused:
    return Refused(422, str(exc))


@router.post(
    "/schedules", status_code=status.HTTP_201_CREATED, response_model=ScheduleCreated, responses=responses(401)
)
async def create_schedule(request: Request, body: ScheduleCreate) -> ScheduleCreated:
    """Schedule a question; the response carries the webhook's signing secret, this once."""
    spec = ScheduleSpec(**{**body.model_dump(), "sources": chosen_sources(body.sources)})
    try:
        record, title = new_schedule(spec, settings_of(request), datetime.now(UTC))
    except ScheduleError as exc:
        raise _refuse(exc) from None
    schedules = schedules_of(services_of(request))
    await asyncio.to_thread(schedules.create, record, title)
    return ScheduleCreated.model_validate({**_fields(record), "webhook_secret": record.webhook_secret})


@router.get("/schedules", response_model=list[ScheduleOut], responses=responses(401))
async def list_schedules(request: Request) -> list[ScheduleOut]:
    schedules = schedules_of(services_of(request))

    def load() -> list[ScheduleOut]:
        return [_out(record, schedules) for record in schedules.all()]

    return await asyncio.to_thread(load)


async def _get(request: Request, schedule_id: str) -> ScheduleRecord:
    record = await asyncio.to_thread(schedules_of(services_of(request)).get, schedule_id)
    if record is None:
        raise not_found("schedule", schedule_id)
    return record


@router.get("/schedules/{schedule_id}", response_model=ScheduleDetail, responses=responses(401, 404))
async def get_schedule(request: Request, schedule_id: str) -> ScheduleDetail:
    record = await _get(request, schedule_id)
    firings = await asyncio.to_thread(_firings, schedules_of(services_of(request)), schedule_id)
    return ScheduleDetail.model_validate({**_fields(record), "firings": firings})


@router.patch("/schedules/{schedule_id}", response_model=ScheduleOut, responses=responses(401, 404))
async def update_schedule(request: Request, schedule_id: str, body: ScheduleUpdate) -> ScheduleOut:
    """Change what is given: the question, timing, sources, notification; `paused` pauses or resumes."""
    current = await _get(request, schedule_id)
    given = body.model_dump(exclude_unset=True)
    if "sources" in given:
        given["sources"] = chosen_sources(given["sources"])
    try:
        columns = edited(current, given, settings_of(request), datetime.now(UTC))
    except ScheduleError as exc:
        raise _refuse(exc) from None
    schedules = schedules_of(services_of(request))
    record = await asyncio.to_thread(schedules.update, schedule_id, columns) if columns else current
    return await asyncio.to_thread(_out, record, schedules)


@router.delete("/schedules/{schedule_id}", status_code=status.HTTP_204_NO_CONTENT, responses=responses(401, 404))
async def delete_schedule(request: Request, schedule_id: str) -> Response:
    """Stop the schedule; its session keeps the runs and reports it made."""
    if not await asyncio.to_thread(schedules_of(services_of(request)).delete, schedule_id):
        raise not_found("schedule", schedule_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.post(
    "/schedules/{schedule_id}/run",
    status_code=status.HTTP_202_ACCEPTED,
    response_model=ScheduleRunStarted,
    responses=responses(400, 401, 404, 409, 429),
)
async def run_schedule_now(request: Request, schedule_id: str) -> ScheduleRunStarted:
    """Run the schedule's question now, compared with its last run like a firing at its due time."""
    record = await _get(request, schedule_id)
    firing = await run_now(services_of(request), record, datetime.now(UTC))
    run_id = firing.run_id or ""
    return ScheduleRunStarted(
        run_id=run_id, session_id=record.session_id, firing_id=firing.id, events_url=f"/api/runs/{run_id}/events"
    )

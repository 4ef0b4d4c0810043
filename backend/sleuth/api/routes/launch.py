"""Starting a run from an HTTP request: `api/starting.py`'s checks and start (its refusals are
answered by the app's `Refused` handler, `api/errors.py`)."""

from __future__ import annotations

from fastapi import Request

from sleuth.api import starting
from sleuth.api.routes.deps import services_of
from sleuth.api.schemas import RunCreated
from sleuth.config import Mode
from sleuth.stream.results import PriorReport
from sleuth.tools import sources


def check_length(request: Request, text: str) -> None:
    starting.check_length(services_of(request), text)


async def check_capacity(request: Request, session_id: str | None = None) -> None:
    await starting.check_capacity(services_of(request), session_id)


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
    started = await starting.start_run(
        services_of(request),
        session_id,
        content,
        mode=mode,
        clarify=clarify,
        new_session=new_session,
        time_budget_s=time_budget_s,
        chosen=chosen,
        review_plan=review_plan,
        followup=followup,
        report_id=report_id,
        prior=prior,
    )
    record = started.record
    return RunCreated(
        run_id=record.id, session_id=session_id, kind=record.kind, events_url=f"/api/runs/{record.id}/events"
    )

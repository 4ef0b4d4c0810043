"""What administrators see of other users (SLEUTH_AUTH=accounts; everyone else gets 403).

Their usage, and their research only through the reads here, each recorded (`accounts.audit`): the
routes every user has answer 404 for another user's ids, an administrator's too.
"""

from __future__ import annotations

import asyncio
from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException, Query, Request, status

from sleuth.accounts.audit import AdminReads
from sleuth.accounts.service import UnknownUser
from sleuth.api.auth import Principal, accounts_of, authenticate
from sleuth.api.routes.account import accounts_only, iso_time
from sleuth.api.routes.deps import Offset, not_found, responses
from sleuth.api.schemas import (
    AdminReadOut,
    AdminSessionOut,
    ErrorOut,
    MessageOut,
    ReportOut,
    RunOut,
    SessionOut,
    UserUsageOut,
)
from sleuth.store.audit import AdminAction
from sleuth.store.store import Store

router = APIRouter(tags=["admin"])

ADMIN_ONLY = {**responses(401, 404), 403: {"model": ErrorOut, "description": "The caller is not an administrator"}}


def _admin(request: Request, principal: Principal, what: str) -> Principal:
    accounts_only(request, what)
    if not principal.is_admin:
        raise HTTPException(status.HTTP_403_FORBIDDEN, detail="administrators only")
    return principal


Admin = Annotated[Principal, Depends(authenticate)]


def _reads(request: Request) -> AdminReads:
    reads: AdminReads = request.app.state.admin_reads
    return reads


async def _users_store(
    request: Request, principal: Principal, name: str, action: AdminAction, session_id: str | None = None
) -> Store:
    """User `name`'s view of the store, once this administrator's read of it is recorded."""
    assert principal.user is not None  # accounts mode: every caller is a user
    admin = principal.user
    try:
        return await asyncio.to_thread(_reads(request).open, admin.id, admin.name, name, action, session_id)
    except UnknownUser:
        raise not_found("user", name) from None


@router.get("/admin/users", response_model=list[UserUsageOut], responses=ADMIN_ONLY)
async def list_users(request: Request, principal: Admin) -> list[UserUsageOut]:
    """Every user and what their research has used (nothing of the research itself)."""
    _admin(request, principal, "listing users")
    return [
        UserUsageOut(
            name=user.name,
            is_admin=user.is_admin,
            disabled=user.disabled,
            created_at=iso_time(user.created_at) or "",
            sessions=used.sessions,
            runs=used.runs,
            input_tokens=used.input_tokens,
            output_tokens=used.output_tokens,
            cost_usd=used.cost_usd,
        )
        for user, used in await asyncio.to_thread(accounts_of(request).usage)
    ]


@router.get("/admin/users/{name}/sessions", response_model=list[SessionOut], responses=ADMIN_ONLY)
async def list_users_sessions(
    request: Request,
    name: str,
    principal: Admin,
    limit: int = Query(50, ge=1, le=500),
    offset: Offset = 0,
) -> list[SessionOut]:
    """User `name`'s sessions, newest first. Recorded in the audit and the server log."""
    _admin(request, principal, "reading another user's research")
    store = await _users_store(request, principal, name, "list_sessions")
    return [SessionOut.model_validate(s) for s in await asyncio.to_thread(store.list_sessions, limit, offset)]


@router.get("/admin/users/{name}/sessions/{session_id}", response_model=AdminSessionOut, responses=ADMIN_ONLY)
async def read_users_session(request: Request, name: str, session_id: str, principal: Admin) -> AdminSessionOut:
    """One of user `name`'s sessions with its messages, runs and reports. Recorded in the audit and the
    server log (when asked, found or not)."""
    _admin(request, principal, "reading another user's research")
    store = await _users_store(request, principal, name, "read_session", session_id)

    def load() -> AdminSessionOut | None:
        record = store.get_session(session_id)
        if record is None:
            return None
        runs = store.list_runs(session_id)
        reports = [store.get_report(run.report_id) for run in runs if run.report_id]
        return AdminSessionOut(
            **SessionOut.model_validate(record).model_dump(),
            owner=name,
            messages=[MessageOut.model_validate(m) for m in store.list_messages(session_id)],
            runs=[RunOut.model_validate(r) for r in runs],
            reports=[ReportOut.model_validate(report) for report in reports if report is not None],
        )

    detail = await asyncio.to_thread(load)
    if detail is None:
        raise not_found("session", session_id)
    return detail


@router.get("/admin/audit", response_model=list[AdminReadOut], responses=ADMIN_ONLY)
async def list_admin_reads(
    request: Request,
    principal: Admin,
    limit: int = Query(100, ge=1, le=1000),
    offset: Offset = 0,
) -> list[AdminReadOut]:
    """Administrators' reads of other users' research, newest first."""
    _admin(request, principal, "the audit")
    return [
        AdminReadOut(
            at=iso_time(read.at) or "",
            admin=read.admin_name,
            user=read.user_name,
            action=read.action,
            session_id=read.session_id,
        )
        for read in await asyncio.to_thread(_reads(request).recent, limit, offset)
    ]

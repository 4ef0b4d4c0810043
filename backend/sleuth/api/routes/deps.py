"""Shared route helpers: the app's store, manager and settings, and the common error responses."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

from fastapi import HTTPException, Query, Request

from sleuth.api.auth import principal_of
from sleuth.api.schemas import ErrorOut
from sleuth.api.services import Services
from sleuth.config import Settings
from sleuth.runs.admission import ModelChecks
from sleuth.runs.service import RunService
from sleuth.store.store import Store

# Where a listing starts: one bound for every paged list.
Offset = Annotated[int, Query(ge=0, le=10_000_000)]


def services_of(request: Request) -> Services:
    """The server's services as the request's caller sees them: every read and write of the store
    by id is the caller's own (`Store.owned_by`); another user's ids are not found."""
    services: Services = request.app.state.services
    return services.seen_by(principal_of(request).user_id)


def store_of(request: Request) -> Store:
    """The store as the request's caller sees it (`services_of`)."""
    return services_of(request).store


def manager_of(request: Request) -> RunService:
    manager: RunService = request.app.state.manager
    return manager


def settings_of(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


def upload_slots_of(request: Request) -> asyncio.Semaphore:
    """One slot per upload being extracted (`SLEUTH_UPLOAD_MAX_CONCURRENT` per server)."""
    slots: asyncio.Semaphore = request.app.state.upload_slots
    return slots


def model_checks_of(request: Request) -> ModelChecks:
    checks: ModelChecks = request.app.state.model_checks
    return checks


def not_found(kind: str, item_id: str) -> HTTPException:
    return HTTPException(status_code=404, detail=f"{kind} {item_id!r} not found")


def responses(*codes: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI entries for the error codes a route can return."""
    text = {
        400: "Research cannot start with the server's settings (the message says what to fix)",
        401: "Not signed in, or a missing or invalid bearer token or API key",
        403: "Not allowed to this caller, or a cookie-authenticated change without its CSRF token",
        404: "Not found",
        409: "The session already has a run in progress",
        413: "Message or upload too large",
        415: "File type not supported",
        429: "Too many concurrent runs or uploads (see Retry-After)",
    }
    return {code: {"model": ErrorOut, "description": text[code]} for code in codes}

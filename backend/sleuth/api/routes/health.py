"""Liveness for load balancers and the Docker HEALTHCHECK (open even when a token is set), and
readiness: whether a run sent now starts at once."""

from __future__ import annotations

from importlib.metadata import version

from fastapi import APIRouter, Request

from sleuth.api.readiness import is_ready
from sleuth.api.routes.deps import manager_of, settings_of
from sleuth.api.routes.sso import LOGIN_PATH
from sleuth.api.schemas import HealthOut, SsoOut
from sleuth.config import Settings

router = APIRouter(tags=["health"])

VERSION = version("sleuth")  # pyproject.toml's, as installed


@router.get("/health", response_model=HealthOut)
async def health(request: Request) -> HealthOut:
    manager = manager_of(request)
    ready, total = manager.readiness()
    return HealthOut(
        status="ok",
        ready=is_ready(request.app.state),
        version=VERSION,
        active_runs=await manager.active_runs(),
        max_runs=manager.max_runs,
        engines=total,
        engines_ready=ready,
        auth=settings_of(request).auth_mode,
        sso=_sso(settings_of(request)),
    )


def _sso(settings: Settings) -> SsoOut | None:
    return SsoOut(name=settings.oidc_name, login_url=LOGIN_PATH) if settings.oidc_issuer else None

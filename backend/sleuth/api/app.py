"""The FastAPI application factory."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import httpx
from fastapi import APIRouter, Depends, FastAPI
from fastapi.middleware.cors import CORSMiddleware
from starlette.routing import Route

from sleuth.accounts.audit import AdminReads
from sleuth.accounts.limits import LoginLimiter
from sleuth.accounts.oidc import OidcClient
from sleuth.accounts.passwords import Passwords
from sleuth.accounts.service import accounts_for
from sleuth.accounts.sso import SingleSignOn, SsoPolicy
from sleuth.accounts.sso_flow import FlowSeal
from sleuth.api.auth import CSRF_HEADER, authenticate
from sleuth.api.errors import BodySizeLimit, install_error_handlers
from sleuth.api.logs import AccessLogMiddleware
from sleuth.api.mcp.http import PATH as MCP_PATH
from sleuth.api.mcp.http import McpEndpoint
from sleuth.api.openai_schemas import OPENAI_PREFIX
from sleuth.api.routes import (
    account,
    admin,
    audio,
    chat,
    health,
    library,
    reports,
    research,
    runs,
    schedules,
    sessions,
    sso,
)
from sleuth.api.routes.health import VERSION
from sleuth.api.scheduling import running_scheduler
from sleuth.api.services import open_services
from sleuth.api.static import find_web_dist, mount_web_ui
from sleuth.config import Settings
from sleuth.core.clock import Clock, SystemClock
from sleuth.core.logs import close_logging, setup_logging
from sleuth.research.run import run_research
from sleuth.runs.executor import RunEvents, RunExecutor
from sleuth.runs.manager import Engine

DESCRIPTION = """Sleuth's HTTP API. Runs belong to the server: start one with a message or
`POST /api/research`, then follow `GET /api/runs/{run_id}/events` (SSE, resumable with
`Last-Event-ID`). With SLEUTH_AUTH=token, send `Authorization: Bearer <token>`; with accounts, sign in
(`POST /api/auth/login`: a cookie, and `X-CSRF-Token` on changes) or send an API key as the bearer token."""


def create_app(
    settings: Settings,
    *,
    engine: Engine | None = None,
    executor: Callable[[RunEvents], RunExecutor] | None = None,
    passwords: Passwords | None = None,
    clock: Clock | None = None,
    oidc_transport: httpx.AsyncBaseTransport | None = None,
) -> FastAPI:
    """Build the app; its limits come from `settings`. `engine` defaults to the real research engine.

    `engine` runs in a separate process, so it must be a module-level function (sent by name).
    `executor` builds where runs execute (`RunManager`'s; default: the engine processes).
    `passwords` hashes and checks passwords (default: argon2id's own costs); `clock` times the
    limit on failed sign-ins; `oidc_transport` carries the calls to the single sign-on provider
    (default: the network).
    """
    engine = engine or run_research
    mcp_endpoint = McpEndpoint()
    oidc = _oidc_client(settings, oidc_transport)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # The database is opened (and migrated) here, not in the factory, so building the app
        # (e.g. to export its OpenAPI schema) touches no files.
        setup_logging(settings.data_dir)
        try:
            async with open_services(settings, engine, executor) as services:
                app.state.services = services
                app.state.store = services.store
                app.state.manager = services.manager
                app.state.model_checks = services.model_checks
                app.state.audio = services.audio
                app.state.accounts = accounts_for(services.store.accounts, settings, passwords)
                app.state.admin_reads = AdminReads(services.store)
                app.state.single_sign_on = SingleSignOn(
                    services.store.accounts, app.state.accounts, SsoPolicy.of(settings)
                )
                async with mcp_endpoint.running(services), running_scheduler(services) as scheduler:
                    app.state.scheduler = scheduler
                    yield
        finally:
            if oidc is not None:
                await oidc.aclose()
            close_logging(settings.data_dir)

    app = FastAPI(title="Sleuth", version=VERSION, description=DESCRIPTION, lifespan=lifespan)
    app.state.settings = settings
    app.state.oidc = oidc
    secret = settings.oidc_client_secret
    app.state.oidc_flow_seal = FlowSeal(secret.get_secret_value()) if oidc and secret else None
    app.state.upload_slots = asyncio.Semaphore(settings.upload_max_concurrent)
    app.state.login_limiter = LoginLimiter(
        clock or SystemClock(), max_failures=settings.login_max_failures, window_s=settings.login_window_s
    )
    install_error_handlers(app)

    api = APIRouter(prefix="/api")
    api.include_router(health.router)
    api.include_router(account.open_router)
    api.include_router(sso.router)  # open: how a caller signs in
    # Every route here serves the caller's data: `authenticate` finds the caller once per request,
    # and the store the routes read (`deps.store_of`) is that caller's view of it.
    protected = APIRouter(dependencies=[Depends(authenticate)])
    for module in (account, admin, sessions, research, runs, reports, library, audio, schedules):
        protected.include_router(module.router)
    api.include_router(protected)
    app.include_router(api)
    app.include_router(chat.router, prefix=OPENAI_PREFIX.rstrip("/"), dependencies=[Depends(authenticate)])
    # An ASGI app, not a route function: the SDK answers MCP's requests and streams. It authenticates itself.
    app.router.routes.append(Route(MCP_PATH, mcp_endpoint, include_in_schema=False))
    mount_web_ui(app, find_web_dist(settings.web_dist))

    # Counts the bytes as they are read, so a chunked body without Content-Length is cut off too.
    app.add_middleware(
        BodySizeLimit, max_bytes=settings.max_body_bytes, upload_max_bytes=settings.upload_max_request_bytes
    )
    if settings.cors_origin_list:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=settings.cors_origin_list,
            allow_methods=["GET", "POST", "PATCH", "DELETE"],
            allow_headers=["Authorization", "Content-Type", "Last-Event-ID", CSRF_HEADER],
        )
    app.add_middleware(AccessLogMiddleware)  # outermost: logs every request, even refused ones
    return app


def _oidc_client(settings: Settings, transport: httpx.AsyncBaseTransport | None) -> OidcClient | None:
    """The single sign-on provider's client, when one is configured (the settings make sure the
    client id and secret come with the issuer)."""
    if settings.oidc_issuer is None:
        return None
    assert settings.oidc_client_id is not None and settings.oidc_client_secret is not None
    return OidcClient(
        settings.oidc_issuer,
        settings.oidc_client_id,
        settings.oidc_client_secret.get_secret_value(),
        transport=transport,
    )

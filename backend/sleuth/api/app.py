"""The FastAPI application factory."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from fastapi import APIRouter, Depends, FastAPI
from fastapi.middleware.cors import CORSMiddleware
from starlette.routing import Route

from sleuth.accounts.limits import LoginLimiter
from sleuth.accounts.passwords import Passwords
from sleuth.accounts.service import accounts_for
from sleuth.api.auth import CSRF_HEADER, authenticate
from sleuth.api.errors import BodySizeLimit, install_error_handlers
from sleuth.api.logs import AccessLogMiddleware
from sleuth.api.mcp.http import PATH as MCP_PATH
from sleuth.api.mcp.http import McpEndpoint
from sleuth.api.openai_schemas import OPENAI_PREFIX
from sleuth.api.routes import account, audio, chat, health, library, reports, research, runs, schedules, sessions
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
) -> FastAPI:
    """Build the app; its limits come from `settings`. `engine` defaults to the real research engine.

    `engine` runs in a separate process, so it must be a module-level function (sent by name).
    `executor` builds where runs execute (`RunManager`'s; default: the engine processes).
    `passwords` hashes and checks passwords (default: argon2id's own costs); `clock` times the
    limit on failed sign-ins.
    """
    engine = engine or run_research
    mcp_endpoint = McpEndpoint()

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
                async with mcp_endpoint.running(services), running_scheduler(services) as scheduler:
                    app.state.scheduler = scheduler
                    yield
        finally:
            close_logging(settings.data_dir)

    app = FastAPI(title="Sleuth", version=VERSION, description=DESCRIPTION, lifespan=lifespan)
    app.state.settings = settings
    app.state.upload_slots = asyncio.Semaphore(settings.upload_max_concurrent)
    app.state.login_limiter = LoginLimiter(
        clock or SystemClock(), max_failures=settings.login_max_failures, window_s=settings.login_window_s
    )
    install_error_handlers(app)

    api = APIRouter(prefix="/api")
    api.include_router(health.router)
    api.include_router(account.open_router)
    # Every route here serves the caller's data: `authenticate` finds the caller once per request,
    # and the store the routes read (`deps.store_of`) is that caller's view of it.
    protected = APIRouter(dependencies=[Depends(authenticate)])
    for module in (account, sessions, research, runs, reports, library, audio, schedules):
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

"""The FastAPI application factory."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from fastapi import APIRouter, Depends, FastAPI
from fastapi.middleware.cors import CORSMiddleware

from sleuth.api.auth import check_token
from sleuth.api.errors import BodySizeLimit, install_error_handlers
from sleuth.api.logs import AccessLogMiddleware
from sleuth.api.openai_schemas import OPENAI_PREFIX
from sleuth.api.routes import audio, chat, health, library, reports, research, runs, sessions
from sleuth.api.routes.health import VERSION
from sleuth.api.static import find_web_dist, mount_web_ui
from sleuth.audio.jobs import AudioJobs
from sleuth.config import Settings
from sleuth.core.logs import close_logging, setup_logging
from sleuth.research.preflight import LOCAL_CHECKS, run_checks
from sleuth.research.run import run_research
from sleuth.runs.admission import ModelChecks, warn_refused
from sleuth.runs.executor import RunEvents, RunExecutor
from sleuth.runs.manager import Engine, RunManager
from sleuth.runs.service import RunService
from sleuth.scaleout.audio_owners import AudioOwners
from sleuth.scaleout.dispatch import Dispatcher
from sleuth.store.store import Store

DESCRIPTION = """Sleuth's HTTP API. Runs belong to the server: start one with a message or
`POST /api/research`, then follow `GET /api/runs/{run_id}/events` (SSE, resumable with
`Last-Event-ID`). When `SLEUTH_API_TOKEN` is set, send `Authorization: Bearer <token>`."""


def create_app(
    settings: Settings,
    *,
    engine: Engine | None = None,
    executor: Callable[[RunEvents], RunExecutor] | None = None,
) -> FastAPI:
    """Build the app; its limits come from `settings`. `engine` defaults to the real research engine.

    `engine` runs in a separate process, so it must be a module-level function (sent by name).
    `executor` builds where runs execute (`RunManager`'s; default: the engine processes).
    """
    engine = engine or run_research

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # The database is opened (and migrated) here, not in the factory, so building the app
        # (e.g. to export its OpenAPI schema) touches no files.
        setup_logging(settings.data_dir)
        store = Store.from_settings(settings)
        manager: RunService
        if settings.distributed:  # runs execute on `sleuth worker` processes
            manager = Dispatcher(settings, store)
            app.state.model_checks = ModelChecks(manager.model_problem, once=False)
        else:
            manager = RunManager(settings, store, max_runs=settings.max_runs, engine=engine, executor=executor)
            app.state.model_checks = ModelChecks(manager.model_problem)
        app.state.store = store
        app.state.manager = manager
        owners = None
        if settings.distributed:  # other servers share the store: audio jobs are leased in Redis
            owners = AudioOwners(settings)
        app.state.audio = AudioJobs(settings, store, owners)
        await manager.start()
        await app.state.audio.recover()
        # A broken setup is in the log before anyone asks. The model check is the engines', made
        # after their warm-up: it is awaited in the background, so the server answers meanwhile.
        app.state.model_checks.start()
        for check in await asyncio.to_thread(run_checks, settings, None, LOCAL_CHECKS):
            if not check.ok:
                warn_refused(check.name, check.detail)
        try:
            yield
        finally:
            app.state.model_checks.stop()
            await app.state.audio.shutdown()
            await manager.shutdown()
            store.close()
            close_logging(settings.data_dir)

    app = FastAPI(title="Sleuth", version=VERSION, description=DESCRIPTION, lifespan=lifespan)
    app.state.settings = settings
    app.state.upload_slots = asyncio.Semaphore(settings.upload_max_concurrent)
    install_error_handlers(app)

    api = APIRouter(prefix="/api")
    api.include_router(health.router)
    protected = APIRouter(dependencies=[Depends(check_token)])
    for module in (sessions, research, runs, reports, library, audio):
        protected.include_router(module.router)
    api.include_router(protected)
    app.include_router(api)
    app.include_router(chat.router, prefix=OPENAI_PREFIX.rstrip("/"), dependencies=[Depends(check_token)])
    mount_web_ui(app, find_web_dist(settings.web_dist))

    # Counts the bytes as they are read, so a chunked body without Content-Length is cut off too.
    app.add_middleware(
        BodySizeLimit, max_bytes=settings.max_body_bytes, upload_max_bytes=settings.upload_max_request_bytes
    )
    if settings.cors_origin_list:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=settings.cors_origin_list,
            allow_methods=["GET", "POST", "DELETE"],
            allow_headers=["Authorization", "Content-Type", "Last-Event-ID"],
        )
    app.add_middleware(AccessLogMiddleware)  # outermost: logs every request, even refused ones
    return app

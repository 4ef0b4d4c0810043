"""What a server holds while it runs: the store, whoever owns the runs, the model check, audio jobs.

`sleuth serve` (the app's lifespan) and `sleuth mcp serve` (stdio) build them here, the same way.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace

from sleuth.audio.jobs import AudioJobs
from sleuth.config import Settings
from sleuth.research.preflight import LOCAL_CHECKS, run_checks
from sleuth.runs.admission import ModelChecks, warn_refused
from sleuth.runs.executor import RunEvents, RunExecutor
from sleuth.runs.manager import Engine, RunManager
from sleuth.runs.service import RunService
from sleuth.scaleout.audio_owners import AudioOwners
from sleuth.scaleout.dispatch import Dispatcher
from sleuth.store.store import Store


@dataclass(frozen=True)
class Services:
    settings: Settings
    store: Store
    manager: RunService
    model_checks: ModelChecks
    audio: AudioJobs

    def seen_by(self, user_id: str | None) -> Services:
        """These services with the store as `user_id` sees it (None: the built-in user, who sees all)."""
        return self if user_id is None else replace(self, store=self.store.owned_by(user_id))


@asynccontextmanager
async def open_services(
    settings: Settings, engine: Engine, executor: Callable[[RunEvents], RunExecutor] | None = None
) -> AsyncIterator[Services]:
    """Open the store, start the runs' owner and the audio jobs; stop them all when the block ends.

    `engine` runs in a separate process, so it must be a module-level function (sent by name).
    """
    store = Store.from_settings(settings)
    manager: RunService
    if settings.distributed:  # runs execute on `sleuth worker` processes
        manager = Dispatcher(settings, store)
        model_checks = ModelChecks(manager.model_problem, once=False)
    else:
        manager = RunManager(settings, store, max_runs=settings.max_runs, engine=engine, executor=executor)
        model_checks = ModelChecks(manager.model_problem)
    owners = None
    if settings.distributed:  # other servers share the store: audio jobs are leased in Redis
        owners = AudioOwners(settings)
    services = Services(settings, store, manager, model_checks, AudioJobs(settings, store, owners))
    await manager.start()
    await services.audio.recover()
    # A broken setup is in the log before anyone asks. The model check is the engines', made
    # after their warm-up: it is awaited in the background, so the server answers meanwhile.
    model_checks.start()
    for check in await asyncio.to_thread(run_checks, settings, None, LOCAL_CHECKS):
        if not check.ok:
            warn_refused(check.name, check.detail)
    try:
        yield services
    finally:
        model_checks.stop()
        await services.audio.shutdown()
        await manager.shutdown()
        store.close()

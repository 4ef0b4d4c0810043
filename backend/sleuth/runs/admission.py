"""The server's model check: made once, off the start-up path, and reused by every request.

Whether the configured models can be called (known to litellm, keys present) depends only on the
settings and the environment, which do not change while the server runs; asking litellm means
importing it, seconds of CPU and hundreds of MiB. A server with engines asks them: each engine
loads litellm anyway, checks the models after its warm-up and says so when it is ready, so the API
process never imports litellm. A server without engines of its own (scaled out: runs go to `sleuth
worker` processes) loads litellm on a background thread as it starts (`/api/health` answers
meanwhile) and checks the models once it has loaded. Either way a request that starts a run waits
for that one answer (at most once, just after start) instead of asking again.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from sleuth.config import Settings
from sleuth.core import heavy
from sleuth.llm.runtime import litellm_ready
from sleuth.research.preflight import Check, check_models

log = logging.getLogger(__name__)


class ModelChecks:
    def __init__(self, settings: Settings, engines: Callable[[], Awaitable[str | None]] | None = None) -> None:
        """`engines`: the engines' answer (`RunManager.model_problem`); without it, litellm here."""
        self._settings = settings
        self._engines = engines
        self._checks: asyncio.Task[list[Check]] | None = None

    def start(self) -> None:
        """Begin checking the models (on the server's event loop)."""
        if self._checks is None:
            if self._engines is not None:
                self._checks = asyncio.create_task(self._ask_engines(self._engines))
                return
            heavy.preload("litellm")  # the server makes no model call of its own: the import is enough
            self._checks = asyncio.create_task(self._check())

    async def problem(self) -> str | None:
        """Why research cannot start with these models; None when every model can be called."""
        self.start()
        assert self._checks is not None
        checks = await asyncio.shield(self._checks)  # one request giving up must not cancel it for all
        return next((check.detail for check in checks if not check.ok), None)

    @property
    def settled(self) -> bool:
        """Whether the check has answered (research is admitted or refused without waiting for it)."""
        return self._checks is not None and self._checks.done()

    def stop(self) -> None:
        """At shutdown: a check still under way is not waited for (its thread finishes on its own)."""
        if self._checks is not None:
            self._checks.cancel()

    async def _ask_engines(self, engines: Callable[[], Awaitable[str | None]]) -> list[Check]:
        problem = await engines()
        return self._logged([Check("models", problem is None, problem or "configured")])

    async def _check(self) -> list[Check]:
        await litellm_ready()
        return self._logged(await asyncio.to_thread(lambda: list(check_models(self._settings, None))))

    @staticmethod
    def _logged(checks: list[Check]) -> list[Check]:
        for check in checks:
            if not check.ok:
                log.warning("research will be refused until this is fixed: %s: %s", check.name, check.detail)
        return checks

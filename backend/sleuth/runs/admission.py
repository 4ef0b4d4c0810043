"""The server's model check: made once, off the start-up path, and reused by every request.

Whether the configured models can be called (known to litellm, keys present) depends only on the
settings and the environment, which do not change while the server runs; asking litellm means
importing it, seconds of CPU. So the server starts that import on a background thread as it starts
(`/api/health` answers meanwhile), checks the models once it has loaded, and a request that starts
a run waits for that one answer (at most once, just after start) instead of asking litellm again.
"""

from __future__ import annotations

import asyncio
import logging

from sleuth.config import Settings
from sleuth.core import heavy
from sleuth.llm.runtime import litellm_ready
from sleuth.research.preflight import Check, check_models

log = logging.getLogger(__name__)


class ModelChecks:
    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._checks: asyncio.Task[list[Check]] | None = None

    def start(self) -> None:
        """Begin loading litellm and checking the models (on the server's event loop)."""
        if self._checks is None:
            heavy.preload("litellm")  # the server makes no model call of its own: the import is enough
            self._checks = asyncio.create_task(self._check())

    async def problem(self) -> str | None:
        """Why research cannot start with these models; None when every model can be called."""
        self.start()
        assert self._checks is not None
        checks = await asyncio.shield(self._checks)  # one request giving up must not cancel it for all
        return next((check.detail for check in checks if not check.ok), None)

    def stop(self) -> None:
        """At shutdown: a check still under way is not waited for (its thread finishes on its own)."""
        if self._checks is not None:
            self._checks.cancel()

    async def _check(self) -> list[Check]:
        await litellm_ready()
        checks = await asyncio.to_thread(lambda: list(check_models(self._settings, None)))
        for check in checks:
            if not check.ok:
                log.warning("research will be refused until this is fixed: %s: %s", check.name, check.detail)
        return checks

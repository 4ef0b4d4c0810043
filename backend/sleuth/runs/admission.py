"""The server's model check: asked of where runs execute, never of litellm in the API process.

Whether the configured models can be called (known to litellm, keys present) depends on the
settings and the environment of the process that calls them; asking litellm means importing it,
seconds of CPU and hundreds of MiB. A server with engines asks them: each engine loads litellm
anyway, checks the models after its warm-up and says so when it is ready. That answer does not
change while the server runs, so a request that starts a run waits for it once, just after start,
and every later one reuses it. Scaled out, runs execute on `sleuth worker` processes, each of which
publishes its check when it is ready; the server reads the latest one for every request (`once`
off), since workers come and go with their own environments.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

log = logging.getLogger(__name__)


def warn_refused(what: str, problem: str) -> None:
    """The one line that says, at start-up, what will refuse research until it is fixed."""
    log.warning("research will be refused until this is fixed: %s: %s", what, problem)


class ModelChecks:
    def __init__(self, engines: Callable[[], Awaitable[str | None]], *, once: bool = True) -> None:
        """`engines`: why the configured models cannot be called where runs execute, None when they can
        (`RunManager.model_problem`, `Dispatcher.model_problem`); `once`: its first answer holds."""
        self._engines = engines
        self._once = once
        self._checks: asyncio.Task[str | None] | None = None

    def start(self) -> None:
        """Begin checking the models (on the server's event loop)."""
        if self._once and self._checks is None:
            self._checks = asyncio.create_task(self._ask_engines())

    async def problem(self) -> str | None:
        """Why research cannot start with these models; None when every model can be called."""
        if not self._once:
            return await self._engines()
        self.start()
        assert self._checks is not None
        return await asyncio.shield(self._checks)  # one request giving up must not cancel it for all

    @property
    def settled(self) -> bool:
        """Whether the check has answered (research is admitted or refused without waiting for it);
        one asked for every request is never waited for."""
        return not self._once or (self._checks is not None and self._checks.done())

    def stop(self) -> None:
        """At shutdown: a check still under way is not waited for."""
        if self._checks is not None:
            self._checks.cancel()

    async def _ask_engines(self) -> str | None:
        problem = await self._engines()
        if problem is not None:
            warn_refused("models", problem)
        return problem

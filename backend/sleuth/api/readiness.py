"""Whether the server can run research now: the one rule behind `/api/health`'s `ready` and the
URL `sleuth serve` prints.

Ready means a run sent now starts at once: every engine of this process has warmed up (a
scaled-out server has none) and the model check has answered. A failing model check still makes
the server ready: research is then refused at once with the reason, which is no reason to wait.
An engine that dies makes it not ready until its successor has warmed up.
"""

from __future__ import annotations

from starlette.datastructures import State

from sleuth.runs.admission import ModelChecks
from sleuth.runs.service import RunService


def is_ready(state: State) -> bool:
    """`state`: the app's, after its lifespan has started."""
    manager: RunService = state.manager
    checks: ModelChecks = state.model_checks
    ready, total = manager.readiness()
    return ready >= total and checks.settled


async def until_ready(state: State) -> str | None:
    """Wait until `is_ready`; returns the model check's problem (None when research can run)."""
    manager: RunService = state.manager
    checks: ModelChecks = state.model_checks
    await manager.until_warm()
    return await checks.problem()

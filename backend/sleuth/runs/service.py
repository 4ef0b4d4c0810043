"""What the routes need from whoever owns runs: `RunManager` (runs execute in this server's
engine processes) or `Dispatcher` (runs are queued for `sleuth worker` processes and streamed
back over Redis). One interface, so the HTTP API is the same in both topologies."""

from __future__ import annotations

import os
from dataclasses import replace
from typing import Literal, Protocol

from sleuth.core.ids import new_id
from sleuth.research.planning.review import PlanAnswer
from sleuth.runs.channel import RunChannel
from sleuth.store.records import MessageRecord, RunKind, RunRecord, now_iso
from sleuth.store.recovery import this_host
from sleuth.stream.results import ResearchRequest
from sleuth.tools.mcp.hub import ServerState

PlanDelivery = Literal["sent", "not_live", "not_waiting"]


class TooManyRuns(Exception):
    """The maximum number of concurrent runs is reached."""


class SessionBusy(Exception):
    """The session already has a run in progress."""


def new_run(
    request: ResearchRequest,
    *,
    session_id: str,
    kind: RunKind,
    answers_run_id: str | None,
    message: MessageRecord | None,
) -> tuple[RunRecord, MessageRecord | None]:
    """The record of a run about to start here, and the user's message linked to it."""
    record = RunRecord(
        id=new_id("r"),
        session_id=session_id,
        question=request.question,
        kind=kind,
        status="running",
        owner_host=this_host(),
        owner_pid=os.getpid(),
        created_at=now_iso(),
        message_id=message.id if message else None,
        mode=request.mode,
        answers_run_id=answers_run_id,
    )
    return record, (replace(message, run_id=record.id) if message is not None else None)


class RunService(Protocol):
    @property
    def max_runs(self) -> int: ...

    async def start(self) -> list[str]:
        """Start; returns the ids of runs found orphaned and ended."""

    async def shutdown(self, grace_s: float = 5.0) -> None: ...

    async def active_runs(self) -> int:
        """Runs counted against `max_runs`."""

    async def session_in_use(self, session_id: str) -> bool:
        """Whether the session has a run in progress."""

    async def mcp_states(self) -> tuple[ServerState, ...] | None:
        """The MCP servers where runs execute, as they last said; None until they have started them."""

    def readiness(self) -> tuple[int, int]:
        """(ready, total) engines of this process, for health."""

    async def until_warm(self) -> None:
        """Return once every engine of this process has warmed up (at once when it has none)."""

    async def open_channel(self, run_id: str) -> RunChannel | None:
        """The live channel of a running run, or None when the store alone can serve it."""

    async def launch(
        self,
        request: ResearchRequest,
        *,
        session_id: str,
        kind: RunKind,
        answers_run_id: str | None,
        message: MessageRecord | None,
        new_session_title: str | None = None,
        owner_id: str | None = None,
    ) -> RunRecord:
        """Register, persist and start a run. Raises TooManyRuns / SessionBusy before writing anything.

        A new session (`new_session_title`) is `owner_id`'s (None: the built-in user's)."""

    async def cancel(self, run_id: str, wait_s: float | None = None) -> bool:
        """Cancel a running run and wait (at most `wait_s`, default `cancel_wait_s`) for it to end.
        False if it is not running."""

    async def deliver_plan_answer(self, run_id: str, answer: PlanAnswer) -> PlanDelivery:
        """Send the user's answer to a run waiting for plan review; one answer per review."""

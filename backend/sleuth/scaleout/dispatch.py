"""The API server's side of scale-out: runs are admitted against the global limit, stored, and
queued for a worker; their packets are streamed back from Redis; cancels and plan answers are
sent to whichever worker holds the run. Nothing here is needed by another server: any of them
can serve any request about any run.
"""

from __future__ import annotations

import asyncio
import logging
import os

from sleuth.config import Settings
from sleuth.core.background import Periodic
from sleuth.core.logs import log_run_event
from sleuth.research.planning.review import PlanAnswer
from sleuth.runs.channel import RunChannel
from sleuth.runs.service import PlanDelivery, SessionBusy, TooManyRuns, new_run
from sleuth.scaleout.admission import GlobalAdmission
from sleuth.scaleout.connection import open_redis
from sleuth.scaleout.control import Control
from sleuth.scaleout.keys import RedisKeys
from sleuth.scaleout.leases import Leases
from sleuth.scaleout.queue import enqueue, ensure_queue_schema, in_queue, queue_app, withdraw
from sleuth.scaleout.reaper import Reaper
from sleuth.scaleout.remote import RemoteChannels
from sleuth.scaleout.streams import PacketStreams
from sleuth.store.records import MessageRecord, RunKind, RunRecord
from sleuth.store.recovery import this_host
from sleuth.store.store import Store
from sleuth.stream.results import ResearchRequest
from sleuth.tools.mcp.hub import ServerState, states_from_json

log = logging.getLogger(__name__)

ENQUEUE_FAILED_MESSAGE = "interrupted: the run could not be queued for a worker"
STREAM_QUIET_S = 1.0  # how long a watched stream may be silent before the store is asked


class Dispatcher:
    def __init__(self, settings: Settings, store: Store) -> None:
        assert settings.database_url is not None  # settings refuse Redis without PostgreSQL
        self._settings = settings
        self._store = store
        self._database_url = settings.database_url.get_secret_value()
        self._redis = open_redis(settings)
        keys = self._keys = RedisKeys(settings.redis_prefix)
        self._admission = GlobalAdmission(self._redis, keys, settings.max_runs)
        self._control = Control(self._redis, keys)
        streams = PacketStreams(self._redis, settings.stream_ttl_s)
        leases = Leases(self._redis, keys, lease_s=settings.run_lease_s, holder=f"{this_host()}:{os.getpid()}")
        self._queue = queue_app(self._database_url, pool_size=4)
        self._reaper = Reaper(
            store,
            keys,
            leases,
            self._admission,
            streams,
            default_mode=settings.mode,
            in_queue=lambda run_ids: in_queue(self._queue, run_ids),
        )
        self._channels = RemoteChannels(store, streams, keys, quiet_s=STREAM_QUIET_S)
        self._reaping = Periodic(self._reaper.reap_once, settings.run_lease_s / 2, what="reaping expired runs")

    @property
    def max_runs(self) -> int:
        return self._settings.max_runs

    async def start(self) -> list[str]:
        await asyncio.to_thread(ensure_queue_schema, self._database_url)
        await self._queue.open_async()
        # Start-up recovery is the reaper's: runs whose worker lease lapsed. Runs still queued, or
        # held by a live worker, are not orphans whoever created them.
        recovered = await self._reaper.reap_once()
        self._reaping.start()
        return recovered

    async def shutdown(self, grace_s: float = 5.0) -> None:
        """Runs go on on their workers; this server only stops watching them."""
        await self._reaping.stop()
        await self._channels.close()
        await self._queue.close_async()
        await self._redis.aclose()

    async def active_runs(self) -> int:
        return await self._admission.active_count()

    async def session_in_use(self, session_id: str) -> bool:
        return await self._admission.session_busy(session_id)

    def readiness(self) -> tuple[int, int]:
        return 0, 0  # this server runs no engines; workers do

    async def model_problem(self) -> str | None:
        """The model check of the worker that got ready last; None before any has (a queued run
        waits for a worker, and the worker that takes it says what is wrong with its models)."""
        problem = await self._redis.get(self._keys.model_problem)  # a str: the client decodes responses
        return str(problem) if problem else None

    async def mcp_states(self) -> tuple[ServerState, ...] | None:
        """The MCP servers as the worker that spoke last sees them; None before any has started them."""
        text = await self._redis.get(self._keys.mcp_states)
        return states_from_json(str(text)) if text else None

    async def until_warm(self) -> None:
        return  # no engines here: the workers warm their own

    async def open_channel(self, run_id: str) -> RunChannel | None:
        return await self._channels.open(run_id)

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
        record, message = new_run(
            request, session_id=session_id, kind=kind, answers_run_id=answers_run_id, message=message
        )
        verdict = await self._admission.admit(record.id, session_id)
        if verdict == "full":
            raise TooManyRuns()
        if verdict == "busy":
            raise SessionBusy()
        try:
            await asyncio.to_thread(
                self._store.create_run, record, message, new_session_title=new_session_title, owner_id=owner_id
            )
        except BaseException:
            await self._admission.release(record.id, session_id)
            raise
        try:
            await enqueue(self._queue, record.id, request)
        except Exception:
            log.exception("run %s could not be queued", record.id)
            await self._reaper.end_run(record, ENQUEUE_FAILED_MESSAGE)
        log_run_event("run_started", record.id, session_id=session_id, kind=kind, mode=request.mode)
        return record

    async def cancel(self, run_id: str, wait_s: float | None = None) -> bool:
        record = await asyncio.to_thread(self._store.get_run, run_id)
        if record is None or record.status != "running":
            return False
        # Told to every worker first: one may be taking the job right now, and then it must hear it.
        await self._control.cancel(run_id)
        log_run_event("run_cancel_requested", run_id)
        if await withdraw(self._queue, run_id):  # still queued: no worker will ever run it
            await self._reaper.end_cancelled(record)
            log_run_event("run_finished", run_id, status="cancelled", stop_reason="cancelled")
        channel = await self._channels.open(run_id)
        if channel is not None:
            await _until_done(channel, self._settings.cancel_wait_s if wait_s is None else wait_s)
        return True

    async def deliver_plan_answer(self, run_id: str, answer: PlanAnswer) -> PlanDelivery:
        record = await asyncio.to_thread(self._store.get_run, run_id)
        if record is None or record.status != "running":
            return "not_live"
        review = await asyncio.to_thread(self._store.last_packet_of, run_id, ("plan_review", "plan_reviewed"))
        if review is None or review.type != "plan_review" or await self._control.cancel_requested(run_id):
            return "not_waiting"
        if not await self._control.claim_plan_answer(run_id, review.seq, answer):
            return "not_waiting"  # another answer to this very review got there first
        await self._control.answer_plan(run_id, answer)
        log_run_event("plan_answered", run_id, approve=answer.approve, edited=answer.steps is not None)
        return "sent"


async def _until_done(channel: RunChannel, wait_s: float) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + wait_s
    while not channel.done:
        changed = channel.changed
        remaining = deadline - loop.time()
        if remaining <= 0:
            return
        try:
            await asyncio.wait_for(changed.wait(), timeout=remaining)
        except TimeoutError:
            return

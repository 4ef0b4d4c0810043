"""`sleuth worker`: takes runs from the queue and executes them in its own engine processes.

Each run goes through the same machinery as in a server: the `RunManager` hands it to an
`EnginePool`, commits its packets through the `PacketWriter` and stores its outcome. What is
added: the run is claimed under a lease (renewed while it runs), its committed packets are
published to its Redis Stream as they become visible (`stop` once the outcome is stored), and
cancels and plan answers arrive over Redis from any API server.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal

from sleuth.config import Settings
from sleuth.core.background import Periodic, stop_task
from sleuth.runs.admission import warn_refused
from sleuth.runs.channel import RunChannel, channel_rows
from sleuth.runs.manager import RunManager
from sleuth.runs.messages import Engine
from sleuth.scaleout.admission import GlobalAdmission
from sleuth.scaleout.connection import open_redis
from sleuth.scaleout.control import Control, ControlMessage
from sleuth.scaleout.keys import RedisKeys
from sleuth.scaleout.leases import Leases
from sleuth.scaleout.queue import (
    QUEUE,
    WORKER_OPTIONS,
    decode_request,
    ensure_queue_schema,
    queue_app,
    register_run_task,
)
from sleuth.scaleout.reaper import Reaper
from sleuth.scaleout.streams import PacketStreams
from sleuth.store.recovery import SHUTDOWN_MESSAGE, this_host
from sleuth.store.store import Store
from sleuth.tools.mcp.hub import ServerState, states_json

log = logging.getLogger(__name__)

PUBLISH_RETRIES = 5


class WorkerHost:
    def __init__(self, settings: Settings, store: Store, engine: Engine, *, concurrency: int) -> None:
        assert settings.database_url is not None  # settings refuse Redis without PostgreSQL
        self._settings = settings
        self._store = store
        self._concurrency = concurrency
        self._database_url = settings.database_url.get_secret_value()
        self._redis = open_redis(settings)
        keys = self._keys = RedisKeys(settings.redis_prefix)
        self._streams = PacketStreams(self._redis, settings.stream_ttl_s)
        self._leases = Leases(self._redis, keys, lease_s=settings.run_lease_s, holder=f"{this_host()}:{os.getpid()}")
        self._admission = GlobalAdmission(self._redis, keys, settings.max_runs)
        self._control = Control(self._redis, keys)
        self._reaper = Reaper(store, keys, self._leases, self._admission, self._streams, default_mode=settings.mode)
        self.manager = RunManager(settings, store, max_runs=concurrency, engine=engine, recover=self._reaper.reap_once)
        self._held: dict[str, RunChannel] = {}
        self._stopping = False
        every = settings.run_lease_s
        self._background = [
            Periodic(self._renew_once, every / 3, what="renewing run leases"),
            Periodic(self._reaper.reap_once, every / 2, what="reaping expired runs"),
            Periodic(self._publish_mcp_states, every / 3, what="publishing the MCP servers' states"),
        ]
        self._published_mcp: tuple[ServerState, ...] | None = None

    # -- lifecycle --------------------------------------------------------------------------

    async def serve(self, stop: asyncio.Event, *, grace_s: float = 5.0) -> None:
        """Take and execute runs until `stop` is set; then end the runs held as interrupted."""
        await asyncio.to_thread(ensure_queue_schema, self._database_url)
        await self.manager.start()  # engines warm up; runs of dead workers are reaped
        checking = asyncio.create_task(self._publish_model_check())
        subscribed = asyncio.Event()
        unsubscribe = asyncio.Event()
        listening = asyncio.create_task(self._control.listen(self._on_control, subscribed, unsubscribe, self._catch_up))
        for loop in self._background:
            loop.start()
        await subscribed.wait()  # a cancel sent once a run is held must reach it
        # A job holds no connection while its run executes (only to be fetched and finished), so
        # the queue's pool follows the store's budget, not the concurrency: 250 runs per worker
        # would otherwise ask PostgreSQL for 254 connections per worker (its default limit is 100).
        # The two extra are procrastinate's LISTEN connection and its fetcher.
        pool_size = min(self._concurrency, self._settings.database_pool_size) + 2
        app = queue_app(self._database_url, pool_size=pool_size)
        register_run_task(app, self._run_job)
        async with app.open_async():
            taking = asyncio.create_task(
                app.run_worker_async(
                    queues=[QUEUE],
                    concurrency=self._concurrency,
                    name=f"sleuth-worker-{this_host()}-{os.getpid()}",
                    install_signal_handlers=False,
                    **WORKER_OPTIONS,
                )
            )
            log.info("worker ready: up to %d runs at a time", self._concurrency)
            await stop.wait()
            self._stopping = True
            taking.cancel()  # no new jobs; procrastinate waits for the running ones, which end next
            await self.manager.shutdown(grace_s)
            await asyncio.wait([taking], timeout=grace_s)  # its jobs end as their runs just did
            await stop_task(taking, "taking jobs from the queue")
        unsubscribe.set()
        await stop_task(checking, "publishing the model check")
        await stop_task(listening, "the control listener")
        for loop in self._background:
            await loop.stop()
        await self._redis.aclose()

    async def _publish_model_check(self) -> None:
        """For the API servers, which import no litellm: they refuse research while it says a problem."""
        problem = await self.manager.model_problem()
        await self._redis.set(self._keys.model_problem, problem or "")
        if problem is not None:
            warn_refused("models", problem)

    async def _publish_mcp_states(self) -> None:
        """For the API servers, which start no MCP server: what this worker's engines said last (at
        the end of each run, and periodically for what changes between runs)."""
        states = await self.manager.mcp_states()
        if states is not None and states != self._published_mcp:
            await self._redis.set(self._keys.mcp_states, states_json(states))
            self._published_mcp = states

    # -- one run ----------------------------------------------------------------------------

    async def _run_job(self, run_id: str, request_json: str) -> None:
        if not await self._leases.claim(run_id):
            log.warning("run %s is already held by another worker; skipped", run_id)
            return
        record = await asyncio.to_thread(self._store.get_run, run_id)
        if record is None or record.status != "running":  # cancelled or reaped while queued
            await self._leases.release(run_id)
            return
        if self._stopping:
            await self._reaper.end_run(record, SHUTDOWN_MESSAGE)
            await self._leases.release(run_id)
            return
        request = decode_request(request_json)
        channel, done = self.manager.adopt(record, request)
        self._held[run_id] = channel
        publishing = asyncio.create_task(self._publish(channel, record.session_id))
        try:
            if await self._control.cancel_requested(run_id):  # asked while it waited in the queue
                await self.manager.cancel(run_id, wait_s=0)
            await asyncio.shield(done)
            await publishing
        finally:
            self._held.pop(run_id, None)
            await self._streams.expire(self._keys.packets(run_id))
            await self._admission.release(run_id, record.session_id)
            await self._leases.release(run_id)

    async def _publish(self, channel: RunChannel, session_id: str) -> None:
        """Publish what the channel makes visible: committed packets, `stop` once the outcome is stored."""
        key = self._keys.packets(channel.run_id)
        async for rows in channel_rows(channel, self._store, after=-1, wait_s=3600):
            if rows and rows[-1].type == "stop":
                # The slot is free before anyone hears `stop`: a client may start its next run at once.
                await self._admission.release(channel.run_id, session_id)
                # So are the MCP servers' states as the run left them (one may have been lost in it).
                await self._publish_mcp_states()
            for attempt in range(PUBLISH_RETRIES):
                try:
                    await self._streams.publish(key, rows)
                    break
                except Exception:  # readers fill a skipped seq from the store; `stop` is retried below
                    log.exception("publishing packets of run %s failed (attempt %d)", channel.run_id, attempt + 1)
        try:
            await self._reaper.publish_rest(channel.run_id)  # whatever a failed publish left out
        except Exception:
            log.exception("publishing the end of run %s failed; readers fall back to the store", channel.run_id)

    # -- from other processes ---------------------------------------------------------------

    async def _on_control(self, message: ControlMessage) -> None:
        if message.run_id not in self._held:
            return  # another worker's run, or not taken yet (the cancel key covers that)
        if message.op == "cancel":
            await self.manager.cancel(message.run_id, wait_s=0)
        elif message.op == "plan" and message.answer is not None:
            self.manager.answer_plan(message.run_id, message.answer)

    async def _renew_once(self) -> None:
        """Renew the leases of the runs held, and act on what was asked of them but never heard."""
        for run_id in await self._leases.renew(list(self._held)):
            # Reaped while this worker was unresponsive: its clients were told it ended.
            log.error("lost the lease of run %s; it was ended elsewhere", run_id)
            self.manager.abandon(run_id)
        await self._catch_up()

    async def _catch_up(self) -> None:
        """Cancels and plan answers whose pub/sub message this worker missed (it was reconnecting)."""
        held = list(self._held)
        reviews = {run_id: seq for run_id in held if (seq := self.manager.open_review(run_id)) is not None}
        for message in await self._control.pending(held, reviews):
            await self._on_control(message)


async def run_worker(settings: Settings, store: Store, engine: Engine, *, concurrency: int) -> None:
    """Serve until SIGTERM or SIGINT."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    host = WorkerHost(settings, store, engine, concurrency=concurrency)
    await host.serve(stop)

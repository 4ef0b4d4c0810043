"""Ending runs whose worker is gone, from whichever server or worker notices first.

The run ends as a dead engine process's runs do in one server: `error` (not recoverable) and
`stop`, stored after its last stored packet (after a `run_start` if it had none), then
published. Not retried from the start: the clients have already seen part of this run (its
plan, its sources), and a second run under the same id would contradict what they saw; a new
run is one click away and says what happened.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from sleuth.config import Mode
from sleuth.core.logs import log_run_event
from sleuth.scaleout.admission import GlobalAdmission
from sleuth.scaleout.keys import RedisKeys
from sleuth.scaleout.leases import Leases
from sleuth.scaleout.streams import PacketStreams
from sleuth.store.records import PacketRow, RunRecord
from sleuth.store.recovery import end_run_as_cancelled, end_run_as_interrupted
from sleuth.store.store import Store

log = logging.getLogger(__name__)

LEASE_EXPIRED_MESSAGE = "interrupted: the worker running it stopped (its lease expired)"
NOT_QUEUED_MESSAGE = "interrupted: the server that accepted it stopped before queueing it"

QueueLookup = Callable[[list[str]], Awaitable[set[str]]]  # run ids -> those with a job in the queue


def stored_after(store: Store, run_id: str, after: int, upto: int | None = None) -> list[PacketRow]:
    """Every stored packet of a run after seq `after` (up to `upto`), page by page."""
    rows: list[PacketRow] = []
    while True:
        page = store.packets_after(run_id, after, 1000, upto)
        if not page:
            return rows
        rows.extend(page)
        after = page[-1].seq


class Reaper:
    def __init__(
        self,
        store: Store,
        keys: RedisKeys,
        leases: Leases,
        admission: GlobalAdmission,
        streams: PacketStreams,
        *,
        default_mode: Mode,
        in_queue: QueueLookup | None = None,
    ) -> None:
        """`default_mode`: the settings' mode, which the `run_start` of a run that never started names."""
        self._store = store
        self._default_mode = default_mode
        self._keys = keys
        self._leases = leases
        self._admission = admission
        self._streams = streams
        self._in_queue = in_queue  # API servers look in the queue; workers leave that to them
        # Slots found without a run, or with a running run that no worker holds and the queue does
        # not have, at the last pass: the server that admitted it died half-way through launching
        # it. Acted on only when the next pass finds the same (a launch takes milliseconds).
        self._suspects: set[str] = set()

    async def end_run(self, record: RunRecord, message: str) -> None:
        """End a run that no engine will finish: store `error` + `stop`, publish whatever the stream
        lacks (through `stop`), free its slot."""
        mode = self._default_mode
        await self._end(record, lambda store, run: end_run_as_interrupted(store, run, message, default_mode=mode))

    async def end_cancelled(self, record: RunRecord) -> None:
        """End a run withdrawn from the queue before any worker took it: `stop` (cancelled)."""
        mode = self._default_mode
        await self._end(record, lambda store, run: end_run_as_cancelled(store, run, default_mode=mode))

    async def _end(self, record: RunRecord, ending: Callable[[Store, RunRecord], object]) -> None:
        # A run that is no longer `running` (its worker ended it meanwhile) is left as it is, in
        # the ending's own transaction.
        await asyncio.to_thread(ending, self._store, record)
        await self._admission.release(record.id, record.session_id)  # free before anyone hears `stop`
        await self.publish_rest(record.id)

    async def publish_rest(self, run_id: str) -> None:
        """Publish the stored packets the stream does not have yet, then let the stream expire."""
        key = self._keys.packets(run_id)
        last = await self._streams.last(key)
        rows = await asyncio.to_thread(stored_after, self._store, run_id, last.seq if last else -1)
        if rows:
            await self._streams.publish(key, rows)
        await self._streams.expire(key)

    async def reap_once(self) -> list[str]:
        reaped = []
        for run_id in await self._leases.expired():
            if not await self._leases.take_for_reaping(run_id):
                continue  # another reaper has it
            record = await asyncio.to_thread(self._store.get_run, run_id)
            if record is not None:
                await self.end_run(record, LEASE_EXPIRED_MESSAGE)
            reaped.append(run_id)
            log_run_event("run_interrupted", run_id, reason="worker lease expired")
        await self._free_stale_slots()
        return reaped

    async def _free_stale_slots(self) -> None:
        """Slots of runs that have ended but were not released (their releaser died in between),
        and of runs whose launch never finished."""
        admitted = await self._admission.admitted()
        running = await asyncio.to_thread(self._store.still_running, list(admitted))
        unheld = [run_id for run_id in admitted if run_id in running]
        missing: list[str] = []
        for run_id in admitted.keys() - running:
            record = await asyncio.to_thread(self._store.get_run, run_id)
            if record is None:
                missing.append(run_id)
            elif record.status != "running":
                await self._admission.release(run_id, admitted[run_id])
            # else its launch stored it since `still_running` looked: a live run keeps its slot
        if self._in_queue is None:
            return
        claimed = await self._leases.claimed()
        unheld = [run_id for run_id in unheld if run_id not in claimed]
        queued = await self._in_queue(unheld)
        suspects = set(missing) | {run_id for run_id in unheld if run_id not in queued}
        for run_id in suspects & self._suspects:
            record = await asyncio.to_thread(self._store.get_run, run_id)
            if record is None:
                await self._admission.release(run_id, admitted[run_id])
            elif await self._leases.claim(run_id):  # as a worker would: one ender, whoever else looks
                try:
                    await self.end_run(record, NOT_QUEUED_MESSAGE)
                finally:
                    await self._leases.release(run_id)
                log_run_event("run_interrupted", run_id, reason="never queued")
        self._suspects = suspects

"""Batched, durable packet persistence on a dedicated thread.

Durability rule (the one replay depends on): a packet is handed to live SSE subscribers only
after the transaction holding it has committed. So every seq a client has ever seen is in the
database, a `Last-Event-ID` resume can always be served from the store, and after a crash the
recovery packets (`error`, `stop`) take the next seqs without contradicting anything a client
saw. The cost is one commit of latency; batching keeps it small: the thread takes everything
queued since its last commit (up to `max_batch` packets) and commits it as one transaction, so
under load many packets share a commit and when idle a lone packet is committed at once.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from sleuth.store.database import Database, DatabaseError

log = logging.getLogger(__name__)

CommitCallback = Callable[[list["StoredPacket"]], None]  # the packets just committed, in submit order


@dataclass(frozen=True, slots=True)
class StoredPacket:
    run_id: str
    seq: int
    type: str
    created_at: float  # unix time the packet was emitted
    json: str


@dataclass(frozen=True, slots=True)
class _Flush:
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[None]


class _Stop:
    pass


_STOP = _Stop()


class PacketWriter:
    def __init__(self, database: Database, on_commit: CommitCallback, *, max_batch: int = 2000) -> None:
        self._database = database
        self._on_commit = on_commit
        self._max_batch = max_batch
        self._queue: queue.SimpleQueue[StoredPacket | _Flush | _Stop] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name="sleuth-packet-writer", daemon=True)
        self.batches = 0  # for benchmarks and tests: how many commits carried packets

    def start(self) -> None:
        self._thread.start()

    def submit(self, packet: StoredPacket) -> None:
        """Queue one packet; never blocks the event loop."""
        self._queue.put(packet)

    async def flush(self) -> None:
        """Return once everything submitted before this call has been committed."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        self._queue.put(_Flush(loop, future))
        await future

    def close(self, timeout: float = 10.0) -> None:
        """Commit what is queued, then stop the thread."""
        if self._thread.is_alive():
            self._queue.put(_STOP)
            self._thread.join(timeout)

    def _run(self) -> None:
        stopping = False
        while not stopping:
            batch: list[StoredPacket] = []
            flushes: list[_Flush] = []
            item = self._queue.get()
            while True:
                if isinstance(item, _Stop):
                    stopping = True
                elif isinstance(item, _Flush):
                    flushes.append(item)
                else:
                    batch.append(item)
                if len(batch) >= self._max_batch:
                    break
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
            if batch:
                self._commit(batch)
            for flush in flushes:
                flush.loop.call_soon_threadsafe(_resolve, flush.future)

    def _commit(self, batch: list[StoredPacket]) -> None:
        # One multi-row INSERT per chunk, in autocommit: a statement is its own transaction, and
        # the fewer calls into the driver, the fewer times this thread has to win the interpreter
        # lock back from a busy engine thread (each call releases and re-takes it).
        for start in range(0, len(batch), _ROWS_PER_STATEMENT):
            chunk = batch[start : start + _ROWS_PER_STATEMENT]
            params = [value for p in chunk for value in (p.run_id, p.seq, p.type, p.created_at, p.json)]
            sql = _INSERT + ",".join(["(?, ?, ?, ?, ?)"] * len(chunk)) + _ON_CONFLICT
            for attempt in range(5):
                try:
                    self._database.execute(sql, params)
                    break
                except DatabaseError:
                    log.exception("packet batch commit failed (attempt %d)", attempt + 1)
                    time.sleep(0.05 * (attempt + 1))
            else:
                # The disk is failing. Live clients still get the packets (a stuck stream helps
                # nobody); the log says replay of these runs will have holes.
                log.error("dropping %d packets after repeated commit failures", len(chunk))
        self.batches += 1
        self._on_commit(batch)


_INSERT = "INSERT INTO packets (run_id, seq, type, created_at, json) VALUES "
# A packet re-submitted after a retried statement is not an error.
_ON_CONFLICT = " ON CONFLICT (run_id, seq) DO NOTHING"
_ROWS_PER_STATEMENT = 500  # 2,500 parameters, well under SQLite's 32,766 and PostgreSQL's 65,535


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)

"""Live runs executing elsewhere, seen from an API server: one `RunChannel` per watched run,
shared by every SSE client of this server, all fed by one reader of their Redis Streams.

The stream holds only committed packets and `stop` only once the outcome is stored, so the
channel marks them visible as they come (`stop` also marks the run finished). A seq the stream
skipped (its worker died between commit and publish) is committed, so it is read from the store.
When a stream goes quiet the store decides: a run no longer `running` is read to its end from
the store, which then holds everything.

One blocked `XREAD` covers every watched stream (a server streaming 1,000 runs holds one Redis
connection for them, not 1,000). A newly watched run joins it at once: the reader also reads
this process's wake stream, and opening a channel adds an entry there, which ends the wait.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Iterable
from typing import Any

from sleuth.core import heavy
from sleuth.core.background import stop_task
from sleuth.runs.channel import RunChannel
from sleuth.scaleout.keys import RedisKeys
from sleuth.scaleout.reaper import stored_after
from sleuth.scaleout.streams import PacketStreams, entry_id
from sleuth.store.packet_writer import StoredPacket
from sleuth.store.records import PacketRow
from sleuth.store.recovery import this_host
from sleuth.store.store import Store

log = logging.getLogger(__name__)

WAKE_TTL_S = 3600  # the wake stream outlives a dead server by this much
CLOSE_WAIT_S = 5.0  # for the reader to return once woken, before it is cancelled


def _committed(run_id: str, rows: Iterable[PacketRow]) -> list[StoredPacket]:
    return [StoredPacket(run_id, row.seq, row.type, 0.0, row.json) for row in rows]


class _Watched:
    __slots__ = ("after", "channel", "quiet_since")

    def __init__(self, channel: RunChannel, after: int, now: float) -> None:
        self.channel = channel
        self.after = after  # the last seq made visible
        self.quiet_since = now  # when its stream last gave anything


class RemoteChannels:
    def __init__(self, store: Store, streams: PacketStreams, keys: RedisKeys, *, quiet_s: float) -> None:
        self._store = store
        self._streams = streams
        self._keys = keys
        self._quiet_s = quiet_s
        self._watched: dict[str, _Watched] = {}
        self._wake_key = keys.wake(f"{this_host()}:{os.getpid()}")
        self._wake_id = "0-0"
        self._reader: asyncio.Task[None] | None = None
        self._closing = False

    async def open(self, run_id: str) -> RunChannel | None:
        """The channel of a running run (shared), or None when the store alone can serve it."""
        watched = self._watched.get(run_id)
        if watched is not None:
            return watched.channel
        record = await asyncio.to_thread(self._store.get_run, run_id)
        if record is None or record.status != "running":
            return None
        last = await self._streams.last(self._keys.packets(run_id))
        if last is not None and last.type == "stop":
            return None  # its outcome is stored: the store serves it to the end
        watched = self._watched.get(run_id)  # another client opened it meanwhile
        if watched is not None:
            return watched.channel
        channel = RunChannel(run_id)
        if last is not None:
            # Everything up to the last published packet is committed: older seqs come from the store.
            channel.mark_committed(_committed(run_id, [last]))
        loop = asyncio.get_running_loop()
        self._watched[run_id] = _Watched(channel, last.seq if last else -1, loop.time())
        if self._reader is None or self._reader.done():
            self._reader = asyncio.create_task(self._read_forever())
        else:
            await self._wake()
        return channel

    async def close(self) -> None:
        self._closing = True
        if self._reader is not None and not self._reader.done():
            await self._wake()  # ends its wait; it sees `_closing` and returns
            await asyncio.wait([self._reader], timeout=CLOSE_WAIT_S)
            await stop_task(self._reader, "the packet stream reader")
        try:
            await self._streams.redis.delete(self._wake_key)
        except heavy.RedisError:
            pass  # it expires by itself

    async def _wake(self) -> None:
        try:
            pipe = self._streams.redis.pipeline(transaction=False)
            pipe.xadd(self._wake_key, {"w": "1"}, maxlen=16, approximate=True)
            pipe.expire(self._wake_key, WAKE_TTL_S)
            await pipe.execute()
        except heavy.RedisError:
            log.warning("could not wake the stream reader; the new run joins it within %.1f s", self._quiet_s)

    async def _read_forever(self) -> None:
        while self._watched and not self._closing:
            try:
                await self._read_once()
            except Exception:  # Redis or the store briefly away: every watched run depends on this loop
                log.exception("reading the packet streams failed; trying again")
                await asyncio.sleep(self._quiet_s)

    async def _read_once(self) -> None:
        streams: dict[Any, Any] = {self._wake_key: self._wake_id}  # redis-py's key and id types
        streams.update({self._keys.packets(run_id): entry_id(w.after) for run_id, w in self._watched.items()})
        try:
            found: Any = await self._streams.redis.xread(streams, count=500, block=max(1, int(self._quiet_s * 1000)))
        except heavy.RedisError:
            log.warning("reading the packet streams failed; the store decides meanwhile")
            await asyncio.sleep(self._quiet_s)  # back off before the next try
            found = []
        now = asyncio.get_running_loop().time()
        for key, entries in found or []:
            if key == self._wake_key:
                self._wake_id = str(entries[-1][0])
                continue
            run_id = self._keys.run_of_packets(str(key))
            watched = self._watched.get(run_id)
            if watched is not None and entries:
                watched.quiet_since = now
                await self._deliver(run_id, watched, PacketStreams.rows(entries))
        await self._ask_the_store(now)

    async def _deliver(self, run_id: str, watched: _Watched, rows: list[PacketRow]) -> None:
        """Make `rows` visible in seq order; any seq the stream lacks (before or among them) is
        committed, so it is read from the store first."""
        contiguous: list[PacketRow] = []
        for row in rows:
            expected = contiguous[-1].seq + 1 if contiguous else watched.after + 1
            if row.seq < expected:
                continue
            if row.seq > expected:
                contiguous += await asyncio.to_thread(stored_after, self._store, run_id, expected - 1, row.seq - 1)
            contiguous.append(row)
        if not contiguous:
            return
        watched.channel.mark_committed(_committed(run_id, contiguous))
        watched.after = contiguous[-1].seq
        if contiguous[-1].type == "stop":
            self._finish(run_id, watched)

    async def _ask_the_store(self, now: float) -> None:
        """Runs whose stream was quiet for a while: those that ended are read from the store."""
        quiet = [run_id for run_id, w in self._watched.items() if now - w.quiet_since >= self._quiet_s]
        if not quiet:
            return
        running = await asyncio.to_thread(self._store.still_running, quiet)
        for run_id in quiet:
            watched = self._watched.get(run_id)
            if watched is None:
                continue
            watched.quiet_since = now
            if run_id not in running:
                rest = await asyncio.to_thread(stored_after, self._store, run_id, watched.after)
                watched.channel.mark_committed(_committed(run_id, rest))
                self._finish(run_id, watched)

    def _finish(self, run_id: str, watched: _Watched) -> None:
        watched.channel.mark_finished()
        if self._watched.get(run_id) is watched:
            del self._watched[run_id]

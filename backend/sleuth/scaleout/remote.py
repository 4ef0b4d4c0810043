"""Live runs executing elsewhere, seen from an API server: one `RunChannel` per watched run, fed
from its Redis Stream by one tail task, shared by every SSE client of this server.

The stream holds only committed packets and `stop` only once the outcome is stored, so the
channel marks them visible as they come (`stop` also marks the run finished). A seq the stream
skipped (its worker died between commit and publish) is committed, so it is read from the store.
When the stream goes quiet the store decides: a run no longer `running` is read to its end
from the store, which then holds everything.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable

from redis.exceptions import RedisError

from sleuth.api.channel import RunChannel
from sleuth.scaleout.keys import RedisKeys
from sleuth.scaleout.reaper import stored_after
from sleuth.scaleout.streams import PacketStreams
from sleuth.store import PacketRow, Store, StoredPacket

log = logging.getLogger(__name__)


def _committed(run_id: str, rows: Iterable[PacketRow]) -> list[StoredPacket]:
    return [StoredPacket(run_id, row.seq, row.type, 0.0, row.json) for row in rows]


class RemoteChannels:
    def __init__(self, store: Store, streams: PacketStreams, keys: RedisKeys, *, quiet_s: float) -> None:
        self._store = store
        self._streams = streams
        self._keys = keys
        self._quiet_ms = max(1, int(quiet_s * 1000))
        self._open: dict[str, RunChannel] = {}
        self._tails: set[asyncio.Task[None]] = set()

    async def open(self, run_id: str) -> RunChannel | None:
        """The channel of a running run (shared), or None when the store alone can serve it."""
        channel = self._open.get(run_id)
        if channel is not None:
            return channel
        record = await asyncio.to_thread(self._store.get_run, run_id)
        if record is None or record.status != "running":
            return None
        last = await self._streams.last(self._keys.packets(run_id))
        if last is not None and last.type == "stop":
            return None  # its outcome is stored: the store serves it to the end
        channel = self._open.get(run_id)  # another client opened it meanwhile
        if channel is not None:
            return channel
        channel = self._open[run_id] = RunChannel(run_id)
        if last is not None:
            # Everything up to the last published packet is committed: older seqs come from the store.
            channel.mark_committed(_committed(run_id, [last]))
        tail = asyncio.create_task(self._tail(channel, last.seq if last else -1))
        self._tails.add(tail)
        tail.add_done_callback(self._tails.discard)
        return channel

    async def close(self) -> None:
        for tail in list(self._tails):
            tail.cancel()
        if self._tails:
            await asyncio.wait(list(self._tails))

    async def _tail(self, channel: RunChannel, after: int) -> None:
        run_id = channel.run_id
        key = self._keys.packets(run_id)
        try:
            while True:
                try:
                    rows = await self._streams.read_after(key, after, block_ms=self._quiet_ms)
                except RedisError:
                    log.warning("reading the packet stream of run %s failed; the store decides meanwhile", run_id)
                    await asyncio.sleep(self._quiet_ms / 1000)  # back off before the next try
                    rows = []
                if rows:
                    if rows[0].seq > after + 1:
                        gap = await asyncio.to_thread(stored_after, self._store, run_id, after, rows[0].seq - 1)
                        rows = gap + rows
                    channel.mark_committed(_committed(run_id, rows))
                    after = rows[-1].seq
                    if rows[-1].type == "stop":
                        channel.mark_finished()
                        return
                    continue
                record = await asyncio.to_thread(self._store.get_run, run_id)
                if record is None or record.status != "running":
                    rest = await asyncio.to_thread(stored_after, self._store, run_id, after)
                    channel.mark_committed(_committed(run_id, rest))
                    channel.mark_finished()
                    return
        finally:
            if self._open.get(run_id) is channel:
                del self._open[run_id]

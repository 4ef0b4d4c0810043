"""The live side of one run in this process: what is committed, and who to wake.

Subscribers do not get their own queues. Each keeps a cursor (the next seq it wants) and reads
packets with seq <= `visible_upto`: from the recent window in memory when it still holds
them, from the store otherwise. Nothing uncommitted is ever handed out, so a packet
is in the database before any client sees it (see store/packet_writer.py), and a slow client
costs a cursor, not a growing buffer.

Everything here runs on the server's event loop (packets reach the writer from the engine
reader thread without passing through the channel).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Iterable

from sleuth.store.packet_writer import StoredPacket
from sleuth.store.records import PacketRow
from sleuth.store.store import Store

PAGE = 1000  # packets per store read


class RunChannel:
    def __init__(self, run_id: str, *, window: int = 256) -> None:
        self.run_id = run_id
        self._window: deque[PacketRow] = deque(maxlen=window)
        self.committed_upto = -1
        self.visible_upto = -1  # what subscribers may read: committed, `stop` held until finished
        self.stop_seq: int | None = None
        self.finished = False
        self.frozen = False  # set at shutdown: packets after this point are not stored or sent
        self._changed = asyncio.Event()

    # -- server loop --------------------------------------------------------------------------

    def mark_committed(self, packets: Iterable[StoredPacket]) -> None:
        """The writer committed these packets (in seq order): publish them and wake subscribers."""
        for packet in packets:
            if packet.seq <= self.committed_upto:
                continue
            self._window.append(PacketRow(seq=packet.seq, type=packet.type, json=packet.json))
            self.committed_upto = packet.seq
            if packet.type == "stop":
                self.stop_seq = packet.seq
        self._publish()

    def mark_finished(self) -> None:
        """The run's outcome (status, report) is stored: `stop` may go out now.

        Holding `stop` until then means a client that fetches the report or the run's status
        on receiving `stop` always finds them.
        """
        self.finished = True
        self._publish()

    def _publish(self) -> None:
        upto = self.committed_upto
        if self.stop_seq is not None and not self.finished:
            upto = min(upto, self.stop_seq - 1)
        if upto > self.visible_upto:
            self.visible_upto = upto
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    @property
    def changed(self) -> asyncio.Event:
        """Set at the next commit. Take it *before* reading state so no commit is missed."""
        return self._changed

    @property
    def done(self) -> bool:
        return self.finished and (self.stop_seq is None or self.visible_upto >= self.stop_seq)

    def window_slice(self, first: int, last: int) -> list[PacketRow] | None:
        """Packets first..last from memory, or None when the window no longer starts that early."""
        if not self._window or self._window[0].seq > first:
            return None
        offset = first - self._window[0].seq
        count = last - first + 1
        return [self._window[i] for i in range(offset, min(offset + count, len(self._window)))]


async def channel_rows(
    channel: RunChannel, store: Store, *, after: int, wait_s: float
) -> AsyncIterator[list[PacketRow]]:
    """The packets a live run's channel makes visible after seq `after`, in batches, up to and
    including `stop`; an empty batch after `wait_s` without one. Shared by SSE clients and by a
    worker publishing its runs to Redis, so both see exactly what is committed."""
    pos = after + 1
    while True:
        changed = channel.changed  # taken before reading state: a commit after this sets it
        upto = channel.visible_upto
        if pos <= upto:
            rows = channel.window_slice(pos, upto)
            if rows is None:  # behind the in-memory window: committed, so stored
                rows = await asyncio.to_thread(store.packets_after, channel.run_id, pos - 1, PAGE, upto)
            if rows:
                yield rows
                pos = rows[-1].seq + 1
                if rows[-1].type == "stop":
                    return
                continue
        if channel.done:
            return
        try:
            await asyncio.wait_for(changed.wait(), timeout=wait_s)
        except TimeoutError:
            yield []

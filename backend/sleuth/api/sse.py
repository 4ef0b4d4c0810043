"""The packet stream of one run (as SSE bytes, or as rows): replay from the store, then live, then close.

Frames are `event: packet`, `id: <seq>`, `data: <packet JSON>`. The generator keeps one
cursor, `pos` (the next seq to send), so nothing is sent twice and nothing is skipped, also
across the switch from stored to live packets. Frames are encoded here (several per chunk) and
yielded as bytes, which sse-starlette passes through untouched; a long replay is then a few
writes, not one per packet.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import Any

from sleuth.runs.channel import PAGE, channel_rows
from sleuth.runs.service import RunService
from sleuth.store.records import PacketRow
from sleuth.store.store import Store

STORE_POLL_S = 0.2  # only for runs live in another worker process


def encode(rows: list[PacketRow]) -> bytes:
    return "".join(f"event: packet\nid: {row.seq}\ndata: {row.json}\n\n" for row in rows).encode()


# A comment line without the blank line that would end an event: keeps proxies and clients
# awake without dispatching anything (some clients, httpx-sse among them, report an empty
# `message` event for a blank line that follows a comment).
HEARTBEAT = b": heartbeat\n"


async def packet_stream(
    manager: RunService, store: Store, run_id: str, *, after: int, heartbeat_s: float
) -> AsyncIterator[bytes]:
    async for rows in run_rows(manager, store, run_id, after=after, heartbeat_s=heartbeat_s):
        yield encode(rows) if rows else HEARTBEAT


async def run_rows(
    manager: RunService, store: Store, run_id: str, *, after: int, heartbeat_s: float
) -> AsyncIterator[list[PacketRow]]:
    """A run's packets after seq `after`, in batches, up to and including `stop`; an empty batch
    after `heartbeat_s` without one."""
    channel = await manager.open_channel(run_id)
    if channel is None:
        async for rows in _from_store(store, run_id, after + 1, heartbeat_s):
            yield rows
        return
    async for rows in channel_rows(channel, store, after=after, wait_s=heartbeat_s):
        yield rows


async def run_objects(
    manager: RunService, store: Store, run_id: str, *, heartbeat_s: float
) -> AsyncIterator[dict[str, Any] | None]:
    """A run's packet objects (`obj`) from its start up to `stop`; None after `heartbeat_s` without one."""
    async for rows in run_rows(manager, store, run_id, after=-1, heartbeat_s=heartbeat_s):
        if not rows:
            yield None
        for row in rows:
            obj: dict[str, Any] = json.loads(row.json)["obj"]
            yield obj


async def _from_store(store: Store, run_id: str, pos: int, heartbeat_s: float) -> AsyncIterator[list[PacketRow]]:
    """A finished run (replay and close), or one being written by another worker (tail the store)."""
    quiet_since = time.monotonic()
    while True:
        rows = await asyncio.to_thread(store.packets_after, run_id, pos - 1, PAGE)
        if rows:
            yield rows
            pos = rows[-1].seq + 1
            if rows[-1].type == "stop":
                return
            quiet_since = time.monotonic()
            continue
        run = await asyncio.to_thread(store.get_run, run_id)
        if run is None or run.status != "running":
            # Read once more: its last packets may have been committed between the two reads.
            rows = await asyncio.to_thread(store.packets_after, run_id, pos - 1, PAGE)
            if rows:
                yield rows
                pos = rows[-1].seq + 1
                if rows[-1].type != "stop":
                    continue
            return
        if time.monotonic() - quiet_since >= heartbeat_s:
            yield []
            quiet_since = time.monotonic()
        await asyncio.sleep(STORE_POLL_S)

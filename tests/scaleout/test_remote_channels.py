"""An API server's one reader of the packet streams of every run it watches, against real Redis."""

from __future__ import annotations

import asyncio
import json

from redis.asyncio import Redis

from sleuth.runs.channel import RunChannel
from sleuth.scaleout.keys import RedisKeys
from sleuth.scaleout.remote import RemoteChannels
from sleuth.scaleout.streams import PacketStreams
from sleuth.store.records import PacketRow, RunRecord, now_iso
from sleuth.store.recovery import this_host
from sleuth.store.store import Store

FOREVER_S = 3600.0  # the reader's own wait: nothing in these tests may depend on it running out
TIMEOUT = 60


def _run(store: Store, run_id: str) -> None:
    record = RunRecord(run_id, "s_1", "q", "question", "running", this_host(), 1, now_iso())
    store.create_run(record)


def _row(run_id: str, seq: int, type_: str) -> PacketRow:
    return PacketRow(seq=seq, type=type_, json=json.dumps({"seq": seq, "run_id": run_id, "obj": {"type": type_}}))


async def _until_done(channel: RunChannel) -> None:
    async with asyncio.timeout(TIMEOUT):
        while not channel.done:
            await channel.changed.wait()


async def _readers(redis: Redis, name: str) -> list[dict[str, str]]:
    """This test's connections that are in XREAD."""
    return [c for c in await redis.client_list() if c.get("name") == name and c.get("cmd") == "xread"]


async def _until_blocked(redis: Redis, name: str) -> None:
    """Until the reader waits in its XREAD: polled, bounded (nothing to await in another process)."""
    async with asyncio.timeout(TIMEOUT):
        while not any("b" in c.get("flags", "") for c in await _readers(redis, name)):
            await asyncio.sleep(0.01)


async def test_a_run_opened_while_the_reader_waits_joins_at_once(parts: tuple[Store, Redis, RedisKeys]) -> None:
    store, redis, keys = parts
    streams = PacketStreams(redis, ttl_s=60)
    for run_id in ("r_a", "r_b"):
        _run(store, run_id)
    channels = RemoteChannels(store, streams, keys, quiet_s=FOREVER_S)
    first = await channels.open("r_a")
    await _until_blocked(redis, keys.prefix)  # waiting on r_a's stream alone, for an hour
    second = await channels.open("r_b")
    rows = [_row("r_b", 0, "run_start"), _row("r_b", 1, "stop")]
    await streams.publish(keys.packets("r_b"), rows)
    assert second is not None and first is not None
    await _until_done(second)  # the wake entry ended the hour's wait
    assert second.window_slice(0, 1) == rows
    assert not first.done
    await channels.close()


async def test_many_runs_share_one_reader_and_a_skipped_seq_comes_from_the_store(
    parts: tuple[Store, Redis, RedisKeys],
) -> None:
    store, redis, keys = parts
    streams = PacketStreams(redis, ttl_s=60)
    run_ids = [f"r_{i}" for i in range(50)]
    for run_id in run_ids:
        _run(store, run_id)
    channels = RemoteChannels(store, streams, keys, quiet_s=FOREVER_S)
    opened = [await channels.open(run_id) for run_id in run_ids]
    stored = [_row(run_id, 1, "plan_start") for run_id in run_ids]  # committed, never published
    store.insert_packets(
        [(row_run, row.seq, row.type, 0.0, row.json) for row_run, row in zip(run_ids, stored, strict=False)]
    )
    for run_id in run_ids:
        await streams.publish(keys.packets(run_id), [_row(run_id, 0, "run_start"), _row(run_id, 2, "stop")])
    readers = await _readers(redis, keys.prefix)
    for channel in opened:
        assert channel is not None
        await _until_done(channel)
    for run_id, channel in zip(run_ids, opened, strict=True):
        assert channel is not None
        assert channel.window_slice(0, 2) == [
            _row(run_id, 0, "run_start"),
            _row(run_id, 1, "plan_start"),
            _row(run_id, 2, "stop"),
        ]
    assert len(readers) <= 1  # one connection waits for all fifty
    await channels.close()


async def test_a_quiet_run_that_ended_is_read_from_the_store(parts: tuple[Store, Redis, RedisKeys]) -> None:
    store, redis, keys = parts
    streams = PacketStreams(redis, ttl_s=60)
    _run(store, "r_q")
    channels = RemoteChannels(store, streams, keys, quiet_s=0.05)
    channel = await channels.open("r_q")
    rows = [_row("r_q", 0, "run_start"), _row("r_q", 1, "stop")]
    store.insert_packets([("r_q", row.seq, row.type, 0.0, row.json) for row in rows])
    store.finish_run("r_q", status="completed", stop_reason="completed")  # its publisher died
    assert channel is not None
    await _until_done(channel)
    assert channel.window_slice(0, 1) == rows
    await channels.close()

"""A worker's control listener, against real Redis: it hears cancels, and it stops when told to
without needing a cancel (which a client library can swallow)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

import pytest
from redis.asyncio import Redis

from sleuth.scaleout.control import Control, ControlMessage
from sleuth.scaleout.keys import RedisKeys
from support.cluster import REDIS_URL

BOUND_S = 30.0  # only so that a broken listener fails the test instead of hanging it


@pytest.fixture
async def control() -> AsyncIterator[Control]:
    keys = RedisKeys(f"sleuth-test-{uuid.uuid4().hex[:10]}")
    # Named: a test finds this client's own connections by the name.
    redis = Redis.from_url(REDIS_URL, decode_responses=True, socket_timeout=None, client_name=keys.prefix)
    try:
        yield Control(redis, keys)
    finally:
        found = [key async for key in redis.scan_iter(match=f"{keys.prefix}:*")]
        if found:
            await redis.delete(*found)
        await redis.aclose()


async def test_the_listener_hears_a_cancel_and_ends_when_stopped_without_being_cancelled(control: Control) -> None:
    heard: list[ControlMessage] = []
    got = asyncio.Event()

    async def handle(message: ControlMessage) -> None:
        heard.append(message)
        got.set()

    subscribed, stop = asyncio.Event(), asyncio.Event()
    listening = asyncio.create_task(control.listen(handle, subscribed, stop))
    await asyncio.wait_for(subscribed.wait(), BOUND_S)
    await control.cancel("r_1")
    await asyncio.wait_for(got.wait(), BOUND_S)
    assert heard == [ControlMessage("cancel", "r_1")]

    stop.set()  # and no cancel: the listener must notice by itself
    await asyncio.wait_for(asyncio.shield(listening), BOUND_S)
    assert listening.done() and listening.exception() is None


async def test_the_listener_catches_up_after_every_reconnection(control: Control) -> None:
    catch_ups = 0
    caught_up = asyncio.Condition()

    async def catch_up() -> None:  # as the worker's: looks for the keys of what it may have missed
        nonlocal catch_ups
        async with caught_up:
            catch_ups += 1
            caught_up.notify_all()

    async def ignore(message: ControlMessage) -> None:
        pass

    subscribed, stop = asyncio.Event(), asyncio.Event()
    listening = asyncio.create_task(control.listen(ignore, subscribed, stop, catch_up))
    async with asyncio.timeout(BOUND_S):
        async with caught_up:
            await caught_up.wait_for(lambda: catch_ups == 1)
        # Cut its connection: whether redis-py reconnects by itself or the listener subscribes
        # again, a message sent meanwhile was missed, so it must catch up again.
        name = control._keys.prefix
        redis = control._redis
        killed = [
            await redis.client_kill_filter(_id=c["id"])
            for c in await redis.client_list(_type="pubsub")
            if c["name"] == name
        ]
        assert killed
        async with caught_up:
            await caught_up.wait_for(lambda: catch_ups == 2)
    stop.set()
    await asyncio.wait_for(listening, BOUND_S)

"""Parts of scale-out against real Redis and a store, for the tests that drive one piece directly."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest
from redis.asyncio import Redis

from sleuth.config import Settings
from sleuth.scaleout.keys import RedisKeys
from sleuth.store.store import Store
from support.cluster import REDIS_URL


@pytest.fixture
async def parts() -> AsyncIterator[tuple[Store, Redis, RedisKeys]]:
    store = Store.from_settings(Settings())
    keys = RedisKeys(f"sleuth-test-{uuid.uuid4().hex[:10]}")
    # As the server's (no read timeout), and named: the tests look for this client's own connections.
    redis = Redis.from_url(REDIS_URL, decode_responses=True, socket_timeout=None, client_name=keys.prefix)
    store.create_session("s_1", "t")
    try:
        yield store, redis, keys
    finally:
        found = [key async for key in redis.scan_iter(match=f"{keys.prefix}:*")]
        if found:
            await redis.delete(*found)
        await redis.aclose()
        store.close()

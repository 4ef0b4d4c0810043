"""The cluster-wide limit on audio jobs, decided in Redis from the leases the servers hold."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

import pytest
from redis.asyncio import Redis

from sleuth.config import Settings
from sleuth.scaleout.audio_owners import AudioOwners
from sleuth.scaleout.keys import RedisKeys
from support.cluster import DATABASE_URL, REDIS_URL


@pytest.fixture
async def two_servers() -> AsyncIterator[tuple[AudioOwners, AudioOwners, Redis, RedisKeys]]:
    """The audio leases of two servers of one cluster that may make two audio files between them."""
    prefix = f"sleuth-test-{uuid.uuid4().hex[:10]}"
    settings = Settings(redis_url=REDIS_URL, database_url=DATABASE_URL, redis_prefix=prefix, audio_max_jobs_cluster=2)
    a, b = AudioOwners(settings), AudioOwners(settings)
    redis = Redis.from_url(REDIS_URL, decode_responses=True)
    try:
        yield a, b, redis, RedisKeys(prefix).for_audio()
    finally:
        found = [key async for key in redis.scan_iter(match=f"{prefix}:*")]
        if found:
            await redis.delete(*found)
        for each in (a, b):
            await each.close()
        await redis.aclose()


async def test_the_servers_together_hold_at_most_the_cluster_limit(
    two_servers: tuple[AudioOwners, AudioOwners, Redis, RedisKeys],
) -> None:
    a, b, _, _ = two_servers
    ids = [f"a_{n}" for n in range(16)]
    burst = await asyncio.gather(*(owner.hold(audio_id) for audio_id, owner in zip(ids, [a, b] * 8, strict=True)))
    assert sum(burst) == 2  # however the requests interleave, two leases and no more
    await a.release(next(audio_id for audio_id, ok in zip(ids, burst, strict=True) if ok))
    assert await b.hold("a_next") and not await a.hold("a_after")


async def test_a_lapsed_lease_no_longer_counts(two_servers: tuple[AudioOwners, AudioOwners, Redis, RedisKeys]) -> None:
    a, b, redis, keys = two_servers
    assert await a.hold("a_1") and await a.hold("a_2") and not await b.hold("a_3")
    await redis.delete(keys.lease("a_1"))  # what the lease's expiry does when the server holding it dies
    assert await b.hold("a_3") and not await b.hold("a_4")
    assert await redis.smembers(keys.claimed) == {"a_2", "a_3"}  # the lapsed job is no longer listed

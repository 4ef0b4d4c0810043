"""Run leases: a worker holds a Redis key with a TTL for each run it executes and renews it; when
a worker dies (kill -9, lost machine) its leases expire and any server or worker reaps the run.

A run is "claimed" from the moment a worker takes it until it ends. Claimed with no lease means
its worker is gone; not claimed means it is still queued (the queue is durable, a worker will
take it), so queued runs are never reaped.
"""

from __future__ import annotations

from sleuth.core import heavy
from sleuth.scaleout.keys import RedisKeys

# KEYS: lease key, claimed set. ARGV: holder, lease ms, run id. Taking the lease and recording the
# claim happen together, so a run can never be held without being visible to the reaper.
_CLAIM = """
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  redis.call('SADD', KEYS[2], ARGV[3])
  return 1
end
return 0
"""


class Leases:
    def __init__(self, redis: heavy.Redis, keys: RedisKeys, *, lease_s: float, holder: str) -> None:
        self._redis = redis
        self._keys = keys
        self.lease_ms = max(1, int(lease_s * 1000))
        self.holder = holder
        self._claim = redis.register_script(_CLAIM)

    async def claim(self, run_id: str) -> bool:
        """Take the run; False if another worker holds it (a job delivered twice)."""
        keys = [self._keys.lease(run_id), self._keys.claimed]
        return bool(await self._claim(keys=keys, args=[self.holder, self.lease_ms, run_id]))

    async def renew(self, run_ids: list[str]) -> list[str]:
        """Extend the leases of these runs; returns those whose lease was already gone (reaped)."""
        if not run_ids:
            return []
        pipe = self._redis.pipeline(transaction=False)
        for run_id in run_ids:
            pipe.set(self._keys.lease(run_id), self.holder, xx=True, px=self.lease_ms)
        results = await pipe.execute()
        return [run_id for run_id, ok in zip(run_ids, results, strict=True) if not ok]

    async def release(self, run_id: str) -> None:
        """The run has ended and its outcome is stored: no longer claimed."""
        pipe = self._redis.pipeline(transaction=True)
        pipe.srem(self._keys.claimed, run_id)
        pipe.delete(self._keys.lease(run_id))
        await pipe.execute()

    async def claimed(self) -> set[str]:
        """Runs taken and not yet ended."""
        return {str(member) for member in await self._redis.smembers(self._keys.claimed)}

    async def expired(self) -> list[str]:
        """Claimed runs whose lease has lapsed."""
        claimed = list(await self.claimed())
        if not claimed:
            return []
        pipe = self._redis.pipeline(transaction=False)
        for run_id in claimed:
            pipe.exists(self._keys.lease(run_id))
        alive = await pipe.execute()
        return [run_id for run_id, exists in zip(claimed, alive, strict=True) if not exists]

    async def alive(self, ids: list[str]) -> set[str]:
        """Those of these ids whose lease is held."""
        if not ids:
            return set()
        pipe = self._redis.pipeline(transaction=False)
        for each in ids:
            pipe.exists(self._keys.lease(each))
        found = await pipe.execute()
        return {each for each, exists in zip(ids, found, strict=True) if exists}

    async def take_for_reaping(self, run_id: str) -> bool:
        """Exactly one reaper wins each expired run."""
        return bool(await self._redis.srem(self._keys.claimed, run_id))

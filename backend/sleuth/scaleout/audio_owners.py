"""Which audio jobs are still being made, when several API servers share one store, and how many.

A server makes an audio job on its own event loop and writes its row `pending`. Alone, a row whose
process is gone is ended at the next start (`audio/jobs.py`). Scaled out, the servers run on
other hosts, and the one that died may never start again: each job is leased in Redis by the
server making it (taken before its row is written, renewed while it runs), and every server ends,
every third of a lease, the pending jobs whose lease has lapsed.

The held leases are also what the cluster-wide limit counts (`SLEUTH_AUDIO_MAX_JOBS_CLUSTER`): a
job is taken only while fewer than that many are held, decided in one script so two servers
taking the last slot at the same moment cannot both get it. A lapsed lease (its server died)
no longer counts.
"""

from __future__ import annotations

import os

from sleuth.config import Settings
from sleuth.scaleout.connection import open_redis
from sleuth.scaleout.keys import RedisKeys
from sleuth.scaleout.leases import Leases
from sleuth.store.recovery import this_host

# KEYS: the claimed set, this job's lease. ARGV: holder, lease ms, audio id, most jobs, lease key head
# and tail. The other jobs' lease keys are named from the set's members (one Redis, not a Redis Cluster).
# Members whose lease has lapsed are dropped as they are counted: for audio the set is only counted.
_HOLD_WITHIN_LIMIT = """
local held = 0
for _, id in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  if redis.call('EXISTS', ARGV[5] .. id .. ARGV[6]) == 1 then held = held + 1
  else redis.call('SREM', KEYS[1], id) end
end
if held >= tonumber(ARGV[4]) then return 0 end
redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2])
redis.call('SADD', KEYS[1], ARGV[3])
return 1
"""


class AudioOwners:
    def __init__(self, settings: Settings) -> None:
        self._redis = open_redis(settings)
        self._keys = RedisKeys(settings.redis_prefix).for_audio()
        holder = f"{this_host()}:{os.getpid()}"
        self._leases = Leases(self._redis, self._keys, lease_s=settings.run_lease_s, holder=holder)
        self._hold = self._redis.register_script(_HOLD_WITHIN_LIMIT)
        self.max_jobs = settings.audio_max_jobs_cluster
        self.renew_every_s = settings.run_lease_s / 3

    async def hold(self, audio_id: str) -> bool:
        """Lease the job to this server; False when the servers already make `max_jobs` between them."""
        head, tail = self._keys.lease_affixes
        keys = [self._keys.claimed, self._keys.lease(audio_id)]
        args: list[str | int] = [self._leases.holder, self._leases.lease_ms, audio_id, self.max_jobs, head, tail]
        return bool(await self._hold(keys=keys, args=args))

    async def release(self, audio_id: str) -> None:
        await self._leases.release(audio_id)

    async def renew(self, audio_ids: list[str]) -> None:
        await self._leases.renew(audio_ids)

    async def alive(self, audio_ids: list[str]) -> set[str]:
        """Those of these jobs that a live server is making."""
        return await self._leases.alive(audio_ids)

    async def close(self) -> None:
        await self._redis.aclose()

"""Which audio jobs are still being made, when several API servers share one store.

A server makes an audio job on its own event loop and writes its row `pending`. Alone, a row whose
process is gone is ended at the next start (`audio/recovery.py`). Scaled out, the servers run on
other hosts, and the one that died may never start again: each job is leased in Redis by the
server making it (taken before its row is written, renewed while it runs), and every server ends,
every third of a lease, the pending jobs whose lease has lapsed.
"""

from __future__ import annotations

import os

from sleuth.config import Settings
from sleuth.scaleout.connection import open_redis
from sleuth.scaleout.keys import RedisKeys
from sleuth.scaleout.leases import Leases
from sleuth.store.recovery import this_host


class AudioOwners:
    def __init__(self, settings: Settings) -> None:
        self._redis = open_redis(settings)
        keys = RedisKeys(settings.redis_prefix).for_audio()
        holder = f"{this_host()}:{os.getpid()}"
        self._leases = Leases(self._redis, keys, lease_s=settings.run_lease_s, holder=holder)
        self.renew_every_s = settings.run_lease_s / 3

    async def hold(self, audio_id: str) -> None:
        await self._leases.claim(audio_id)

    async def release(self, audio_id: str) -> None:
        await self._leases.release(audio_id)

    async def renew(self, audio_ids: list[str]) -> None:
        await self._leases.renew(audio_ids)

    async def alive(self, audio_ids: list[str]) -> set[str]:
        """Those of these jobs that a live server is making."""
        return await self._leases.alive(audio_ids)

    async def close(self) -> None:
        await self._redis.aclose()

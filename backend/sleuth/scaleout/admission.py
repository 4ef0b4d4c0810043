"""The run limit across every server and worker, and one run at a time per session.

Both are decided in one Lua script, so two servers admitting at the same moment cannot both take
the last slot. A slot is held from admission until the run's outcome is stored (released by the
worker that ran it, by the reaper that ended it, or by the server whose launch failed).
"""

from __future__ import annotations

from typing import Literal

from sleuth.core import heavy
from sleuth.scaleout.keys import RedisKeys

Admission = Literal["admitted", "full", "busy"]

# KEYS: active hash, session key. ARGV: max runs, run id, session id.
_ADMIT = """
if redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
if redis.call('EXISTS', KEYS[2]) == 1 then return -1 end
redis.call('HSET', KEYS[1], ARGV[2], ARGV[3])
redis.call('SET', KEYS[2], ARGV[2])
return 1
"""

# KEYS: active hash, session key. ARGV: run id. The session key is only dropped if it is this run's.
_RELEASE = """
redis.call('HDEL', KEYS[1], ARGV[1])
if redis.call('GET', KEYS[2]) == ARGV[1] then redis.call('DEL', KEYS[2]) end
return 1
"""


class GlobalAdmission:
    def __init__(self, redis: heavy.Redis, keys: RedisKeys, max_runs: int) -> None:
        self._redis = redis
        self._keys = keys
        self.max_runs = max_runs
        self._admit = redis.register_script(_ADMIT)
        self._release = redis.register_script(_RELEASE)

    async def admit(self, run_id: str, session_id: str) -> Admission:
        keys = [self._keys.active, self._keys.session(session_id)]
        result = int(await self._admit(keys=keys, args=[self.max_runs, run_id, session_id]))
        return "admitted" if result == 1 else "full" if result == 0 else "busy"

    async def release(self, run_id: str, session_id: str) -> None:
        await self._release(keys=[self._keys.active, self._keys.session(session_id)], args=[run_id])

    async def active_count(self) -> int:
        return int(await self._redis.hlen(self._keys.active))

    async def session_busy(self, session_id: str) -> bool:
        return bool(await self._redis.exists(self._keys.session(session_id)))

    async def admitted(self) -> dict[str, str]:
        """Run id -> session id of every run holding a slot."""
        raw = await self._redis.hgetall(self._keys.active)
        return {str(k): str(v) for k, v in raw.items()}

"""The reaper's slot accounting against real Redis: a slot is freed only when its run has ended."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from redis.asyncio import Redis

from sleuth.scaleout.admission import GlobalAdmission
from sleuth.scaleout.keys import RedisKeys
from sleuth.scaleout.leases import Leases
from sleuth.scaleout.reaper import Reaper
from sleuth.scaleout.streams import PacketStreams
from sleuth.store.records import RunRecord, now_iso
from sleuth.store.recovery import this_host
from sleuth.store.store import Store


class LaunchedWhileLooking:
    """The store as a reaper sees it while another server launches a run: the run is stored just
    after `still_running` has looked (its slot was taken before, as `launch` does)."""

    def __init__(self, store: Store, launching: RunRecord) -> None:
        self._store = store
        self._launching: RunRecord | None = launching

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def still_running(self, run_ids: Sequence[str]) -> set[str]:
        found = self._store.still_running(run_ids)
        if self._launching is not None:
            self._store.create_run(self._launching)
            self._launching = None
        return found


def _record(run_id: str) -> RunRecord:
    return RunRecord(run_id, "s_1", "q", "question", "running", this_host(), 1, now_iso())


async def test_a_run_stored_while_the_reaper_looks_keeps_its_slot(parts: tuple[Store, Redis, RedisKeys]) -> None:
    store, redis, keys = parts
    admission = GlobalAdmission(redis, keys, max_runs=2)
    ended = _record("r_ended")
    store.create_run(ended)
    store.finish_run(ended.id, status="completed", stop_reason="completed")
    assert await admission.admit(ended.id, "s_1") == "admitted"  # its releaser died before releasing
    assert await admission.admit("r_new", "s_2") == "admitted"  # being launched: not stored yet
    leases = Leases(redis, keys, lease_s=30, holder="test:1")
    seen = LaunchedWhileLooking(store, _record("r_new"))
    # a stand-in that forwards everything but `still_running` to the real Store, not a Store itself
    reaper = Reaper(seen, keys, leases, admission, PacketStreams(redis, 60), default_mode="heavy")  # type: ignore[arg-type]
    await reaper.reap_once()
    # The ended run's slot is free; the run that was being launched keeps its slot, or a third run
    # would be admitted beside two running ones.
    assert await admission.admitted() == {"r_new": "s_2"}

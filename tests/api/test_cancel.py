"""Cancel: the run ends within a second with stop `cancelled`, keeping what was written."""

from __future__ import annotations

import asyncio
import json
import time

import httpx

from conftest import LiveServer, assert_contiguous, read_events, start_research


async def test_cancel_stops_a_live_run_within_a_second(hanging_server: LiveServer) -> None:
    async with (
        httpx.AsyncClient(base_url=hanging_server.base_url, timeout=30) as client,
        httpx.AsyncClient(base_url=hanging_server.base_url, timeout=30) as watcher,
    ):
        run_id = await start_research(client, clarify=False)
        before = await read_events(client, run_id, until_type="plan_done")  # now it hangs in the orchestrator
        watching = asyncio.create_task(read_events(watcher, run_id))
        started = time.monotonic()
        response = await client.post(f"/api/runs/{run_id}/cancel")
        elapsed = time.monotonic() - started
        watched = await watching
        again = await client.post(f"/api/runs/{run_id}/cancel")
        run = (await client.get(f"/api/runs/{run_id}")).json()
    assert response.status_code == 200 and response.json() == {
        "run_id": run_id,
        "status": "cancelled",
        "cancelled": True,
    }
    assert elapsed < 1.0
    assert again.json()["cancelled"] is False  # already over: nothing to do, still 200
    assert watched[-1].type == "stop" and json.loads(watched[-1].data)["obj"]["reason"] == "cancelled"
    assert_contiguous(watched)
    assert [e.data for e in before] == [e.data for e in watched[: len(before)]]  # what was written is kept
    assert [e.data for e in watched] == hanging_server.stored_packets(run_id)
    assert run["status"] == "cancelled" and run["stop_reason"] == "cancelled"

"""Cancel: the run ends with stop `cancelled`, keeping what was written.

How fast ("within a second") is measured by `bench/cancel.py`, not asserted here: on a loaded
machine the wall time of a cancel says more about the machine than about the server.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import httpx
import pytest

from conftest import LiveServer, assert_contiguous, live_server, read_events, start_research
from sleuth_testkit.engine import scripted_settings
from sleuth_testkit.model import ScriptedLLM

CLIENT_TIMEOUT_S = 30.0


@pytest.fixture
def patient_server(hanging_llm: ScriptedLLM) -> Iterator[LiveServer]:
    """The cancel answers once the run has ended, for as long as the client waits for the answer
    (the default wait, 5 s, is about a user's patience, and a loaded machine can outlast it)."""
    with live_server(scripted_settings(hanging_llm, cancel_wait_s=CLIENT_TIMEOUT_S)) as live:
        yield live


async def test_cancel_stops_a_live_run_and_keeps_what_was_written(patient_server: LiveServer) -> None:
    hanging_server = patient_server
    async with (
        httpx.AsyncClient(base_url=hanging_server.base_url, timeout=CLIENT_TIMEOUT_S) as client,
        httpx.AsyncClient(base_url=hanging_server.base_url, timeout=CLIENT_TIMEOUT_S) as watcher,
    ):
        run_id = await start_research(client, clarify=False)
        before = await read_events(client, run_id, until_type="plan_done")  # now it hangs in the orchestrator
        watching = asyncio.create_task(read_events(watcher, run_id))
        response = await client.post(f"/api/runs/{run_id}/cancel")
        watched = await watching
        again = await client.post(f"/api/runs/{run_id}/cancel")
        run = (await client.get(f"/api/runs/{run_id}")).json()
    assert response.status_code == 200 and response.json() == {
        "run_id": run_id,
        "status": "cancelled",
        "cancelled": True,
    }
    assert again.json()["cancelled"] is False  # already over: nothing to do, still 200
    assert watched[-1].type == "stop" and json.loads(watched[-1].data)["obj"]["reason"] == "cancelled"
    assert_contiguous(watched)
    assert [e.data for e in before] == [e.data for e in watched[: len(before)]]  # what was written is kept
    assert [e.data for e in watched] == hanging_server.stored_packets(run_id)
    assert run["status"] == "cancelled" and run["stop_reason"] == "cancelled"

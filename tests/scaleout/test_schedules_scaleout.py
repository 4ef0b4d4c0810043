"""Schedules scaled out: two `sleuth serve` processes, each with its scheduler ticking, and a worker,
on one PostgreSQL schema. A due schedule fires once; its run executes on the worker and ends in the
schedule's session like any run."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx

from sleuth.store.store import Store
from sleuth_testkit.model import ScriptedLLM
from sleuth_testkit.scenarios import ResearchModel
from support.cluster import cluster
from support.scaleout import TIMEOUT
from support.sse import read_events


async def test_a_due_schedule_fires_once_across_servers_and_runs_on_a_worker(tmp_path: Path) -> None:
    ticking = {"SLEUTH_SCHEDULE_TICK_S": "0.1", "SLEUTH_SCHEDULE_JITTER_S": "0"}
    with ScriptedLLM(ResearchModel()) as llm, cluster(llm, tmp_path / "logs", workers=1, **ticking) as running:
        first, second = running.servers
        async with httpx.AsyncClient(base_url=first.base_url, timeout=TIMEOUT) as client:
            created = (
                await client.post("/api/schedules", json={"question": "How do descriptors work?", "every": "1h"})
            ).json()
            store = Store(tmp_path / "unused", running.env["SLEUTH_DATABASE_URL"])
            try:
                store.database.execute(  # due now, as if the hour had passed, for both servers' schedulers
                    "UPDATE schedules SET next_due_at = ? WHERE id = ?",
                    ("2000-01-01T00:00:00.000+00:00", created["id"]),
                )
                async with asyncio.timeout(TIMEOUT):
                    while not (firings := (await client.get(f"/api/schedules/{created['id']}")).json()["firings"]):
                        await asyncio.sleep(0.1)  # the schedulers run in the servers: only their effect shows
                events = await read_events(client, firings[0]["run_id"])
                async with httpx.AsyncClient(base_url=second.base_url, timeout=TIMEOUT) as other:
                    seen = (await other.get(f"/api/schedules/{created['id']}")).json()
                    session = (await other.get(f"/api/sessions/{created['session_id']}")).json()
            finally:
                store.close()
    assert events[-1].type == "stop" and json.loads(events[-1].data)["obj"]["reason"] == "completed"
    assert [(f["status"], f["run_id"]) for f in seen["firings"]] == [("fired", firings[0]["run_id"])]
    assert [r["id"] for r in session["runs"]] == [firings[0]["run_id"]]
    assert seen["next_due_at"] > "2026"

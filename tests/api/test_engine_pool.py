"""Several engine processes: runs are spread over them, a dead one ends only its own runs and is
replaced, and cancel and plan-review answers reach the process that runs them. Which process runs a
run is read from the pool's placement (its pid), never inferred from timing.

One server with two engine processes serves the module (each process imports and warms litellm):
every test waits until both are warm, a replaced one included, and ends the runs it started."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from collections.abc import Iterator

import httpx
import pytest

from conftest import LiveServer, assert_contiguous, live_server, read_events, start_research
from sleuth.runs.engine_pool import EnginePool
from sleuth_testkit.engine import scripted_settings
from sleuth_testkit.model import ScriptedLLM
from sleuth_testkit.scenarios import HangingOrchestrator


@pytest.fixture(scope="module")
def two_engines(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    data_dir = tmp_path_factory.mktemp("two-engines")
    with (
        ScriptedLLM(HangingOrchestrator()) as llm,
        live_server(scripted_settings(llm, engine_processes=2, data_dir=data_dir)) as live,
    ):
        yield live


async def _warm_pool(server: LiveServer) -> EnginePool:
    pool = server.app_state.manager.executor
    assert isinstance(pool, EnginePool)
    # Placement prefers warm engines; wait for both so placement is by load alone.
    assert await asyncio.to_thread(pool.wait_ready, 120)
    return pool


def _obj(event_data: str) -> dict:  # type: ignore[type-arg]
    return json.loads(event_data)["obj"]  # type: ignore[no-any-return]


async def test_health_reports_the_engines(two_engines: LiveServer) -> None:
    await _warm_pool(two_engines)
    async with httpx.AsyncClient(base_url=two_engines.base_url, timeout=30) as client:
        health = (await client.get("/api/health")).json()
    assert health["engines"] == 2 and health["engines_ready"] == 2


async def test_runs_are_spread_and_a_dead_engine_ends_only_its_runs(two_engines: LiveServer) -> None:
    pool = await _warm_pool(two_engines)
    async with httpx.AsyncClient(base_url=two_engines.base_url, timeout=60) as client:
        first = await start_research(client, clarify=False)
        second = await start_research(client, clarify=False)
        await read_events(client, first, until_type="plan_done")
        await read_events(client, second, until_type="plan_done")
        doomed, survivor = pool.pid_of(first), pool.pid_of(second)
        assert doomed is not None and survivor is not None and doomed != survivor  # one run on each
        assert sorted(pool.pids) == sorted([doomed, survivor])

        os.kill(doomed, signal.SIGKILL)
        killed = await read_events(client, first)
        assert _obj(killed[-2].data)["message"] == "interrupted: the engine process exited"
        assert _obj(killed[-1].data) == {"type": "stop", "reason": "error"}
        assert_contiguous(killed)

        # the other engine's run is untouched: still live, and its cancel still reaches it
        assert (await client.get(f"/api/runs/{second}")).json()["status"] == "running"
        assert pool.pid_of(second) == survivor
        cancelled = await client.post(f"/api/runs/{second}/cancel")
        rest = await read_events(client, second)
        assert cancelled.status_code == 200
        assert _obj(rest[-1].data) == {"type": "stop", "reason": "cancelled"}

        # the dead engine was replaced: two engines again, and a later run works
        assert doomed not in pool.pids and len(pool.pids) == 2
        third = await start_research(client, clarify=False)
        await read_events(client, third, until_type="plan_done")
        assert pool.pid_of(third) in pool.pids
        await client.post(f"/api/runs/{third}/cancel")
        assert _obj((await read_events(client, third))[-1].data)["reason"] == "cancelled"


async def test_plan_answers_and_cancels_reach_the_right_engine(two_engines: LiveServer) -> None:
    pool = await _warm_pool(two_engines)
    async with httpx.AsyncClient(base_url=two_engines.base_url, timeout=60) as client:
        runs = [await start_research(client, clarify=False, review_plan=True) for _ in range(2)]
        waiting = [await read_events(client, run_id, until_type="plan_review") for run_id in runs]
        assert pool.pid_of(runs[0]) != pool.pid_of(runs[1])
        # edit one plan, approve the other: each answer must land in its own run
        edited = await client.post(f"/api/runs/{runs[0]}/plan", json={"steps": ["Only the first run's step"]})
        approved = await client.post(f"/api/runs/{runs[1]}/plan", json={"approve": True})
        reviewed = [
            await read_events(client, run_id, last_event_id=events[-1].seq, until_type="plan_reviewed")
            for run_id, events in zip(runs, waiting, strict=True)
        ]
        for run_id in runs:
            await client.post(f"/api/runs/{run_id}/cancel")
        ends = [(await read_events(client, run_id))[-1] for run_id in runs]
    assert edited.status_code == 200 and approved.status_code == 200
    assert _obj(reviewed[0][-1].data) == {
        "type": "plan_reviewed",
        "outcome": "edited",
        "steps": ["Only the first run's step"],
    }
    assert _obj(reviewed[1][-1].data)["outcome"] == "approved"
    assert [_obj(end.data) for end in ends] == [{"type": "stop", "reason": "cancelled"}] * 2

"""`/api/health`'s `ready`: false while the engines warm up, true once a run starts at once; a run
asked for meanwhile waits for the first engine's model check, then runs. The warm-up is held by a
gate the test opens."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import replace

import httpx

from conftest import live_server, read_events, start_research
from sleuth.config import Settings
from sleuth.research.planning.review import PlanAnswer
from sleuth.research.run import run_research
from sleuth.runs.engine_pool import EnginePool
from sleuth.runs.executor import RunEvents
from sleuth.runs.manager import RunManager
from sleuth.runs.messages import Ready
from sleuth.store.store import Store
from sleuth.stream.results import ResearchRequest
from sleuth_testkit.engine import scripted_settings
from sleuth_testkit.model import ScriptedLLM
from support.engines import NoRuns

TIMEOUT_S = 60


class GatedWarmUp:
    """The real engine (on a thread of this process), reported warm only once the gate opens: until
    then the server sees an engine still warming up."""

    def __init__(self, settings: Settings, events: RunEvents) -> None:
        self._events = events
        self._lock = threading.Lock()
        self._open = False
        self._held_ready: list[Ready] = []
        self._pool = EnginePool(settings, run_research, replace(events, on_ready=self._on_ready), processes=0)

    def open(self) -> None:
        with self._lock:
            self._open = True
            ready, self._held_ready = self._held_ready, []
        for message in ready:
            self._events.on_ready(message)

    def _on_ready(self, message: Ready) -> None:
        with self._lock:
            if not self._open:
                self._held_ready.append(message)
                return
        self._events.on_ready(message)

    def start(self) -> None:
        self._pool.start()

    def start_run(self, run_id: str, request: ResearchRequest) -> None:
        self._pool.start_run(run_id, request)

    def answer_plan(self, run_id: str, answer: PlanAnswer) -> None:
        self._pool.answer_plan(run_id, answer)

    def cancel(self, run_id: str) -> None:
        self._pool.cancel(run_id)

    def stop(self, timeout: float) -> None:
        self._pool.stop(timeout)

    def readiness(self) -> tuple[int, int]:
        ready, total = self._pool.readiness()
        return (ready if self._open else 0), total


async def _health(client: httpx.AsyncClient) -> dict[str, object]:
    response = await client.get("/api/health")
    assert response.status_code == 200
    body: dict[str, object] = response.json()
    return body


async def test_health_is_not_ready_while_warming_and_a_run_asked_meanwhile_waits_then_runs(llm: ScriptedLLM) -> None:
    gates: list[GatedWarmUp] = []

    def gated(events: RunEvents) -> GatedWarmUp:
        gates.append(GatedWarmUp(settings, events))
        return gates[0]

    settings = scripted_settings(llm, engine_processes=0)
    with live_server(settings, executor=gated) as live:
        async with httpx.AsyncClient(base_url=live.base_url, timeout=TIMEOUT_S) as client:
            warming = await _health(client)
            assert (warming["status"], warming["ready"], warming["engines_ready"]) == ("ok", False, 0)
            asked = asyncio.create_task(start_research(client, clarify=False))  # asked during the warm-up
            assert (await _health(client))["ready"] is False  # health answers while the ask waits
            assert not asked.done() and llm.calls == []  # nothing has started: the gate holds the engine

            gates[0].open()
            run_id = await asyncio.wait_for(asked, TIMEOUT_S)
            events = await read_events(client, run_id)
            assert events[-1].type == "stop"
            assert (await client.get(f"/api/runs/{run_id}")).json()["status"] == "completed"
            # The run has gone through the engine, so it has warmed up and its `Ready` has reached
            # the server's loop before the run's `RunDone` did.
            ready = await _health(client)
            assert (ready["ready"], ready["engines_ready"], ready["engines"]) == (True, 1, 1)


class Warming(NoRuns):
    """Two engines that warm up when the test says, one at a time."""

    def __init__(self, events: RunEvents) -> None:
        super().__init__(events)
        self.warm = 0

    def warm_one(self) -> None:
        self.warm += 1
        self.events.on_ready(Ready())

    def readiness(self) -> tuple[int, int]:
        return self.warm, 2


async def test_until_warm_returns_once_every_engine_has_warmed_up() -> None:
    settings = Settings(mode="light")
    store = Store.from_settings(settings)
    engines: list[Warming] = []

    def executor(events: RunEvents) -> Warming:
        engines.append(Warming(events))
        return engines[0]

    manager = RunManager(settings, store, max_runs=1, engine=run_research, executor=executor)
    try:
        await manager.start()
        waiting = asyncio.create_task(manager.until_warm())
        engines[0].warm_one()
        for _ in range(5):  # the first `Ready` reaches the loop, and the waiter looks again
            await asyncio.sleep(0)
        assert not waiting.done()  # one engine of two is not enough
        engines[0].warm_one()
        await asyncio.wait_for(waiting, TIMEOUT_S)
        await asyncio.wait_for(manager.until_warm(), TIMEOUT_S)  # and at once from now on
    finally:
        await manager.shutdown()
        store.close()

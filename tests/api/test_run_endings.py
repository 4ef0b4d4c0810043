"""Runs ended by anything but their engine's own finish — an engine that raised before it began, an
engine process that died as the run was handed to it — still start with `run_start` and end with
one `stop`, as docs/protocol.md promises every run. (Restart recovery: test_store.py; the
scale-out reaper and a cancel of a queued run: tests/scaleout/test_scaleout.py.)"""

from __future__ import annotations

import json

import httpx

from conftest import QUESTION, live_server, read_events, start_research
from sleuth.config import Settings
from sleuth.research.run import run_research
from sleuth.runs.manager import ENGINE_EXIT_MESSAGE, RunManager
from sleuth.store.store import Store
from sleuth.stream.results import ResearchRequest
from sleuth_testkit.engine import scripted_settings
from sleuth_testkit.model import ScriptedLLM
from sleuth_testkit.scenarios import ResearchModel
from support.engines import FAILED_BEFORE_START, NoRuns, failing_engine
from support.invariants import check_stored


async def test_a_run_whose_engine_raised_before_it_began_still_starts_with_run_start() -> None:
    with ScriptedLLM(ResearchModel()) as llm, live_server(scripted_settings(llm), engine=failing_engine) as server:
        async with httpx.AsyncClient(base_url=server.base_url, timeout=60) as client:
            run_id = await start_research(client, clarify=False, mode="light")
            streamed = await read_events(client, run_id)
            session_id = (await client.get(f"/api/runs/{run_id}")).json()["session_id"]
        stored = server.stored_packets(run_id)
    start, error, stop = check_stored([event.data for event in streamed])
    assert [event.data for event in streamed] == stored
    assert (start.obj.type, start.obj.session_id, start.obj.question, start.obj.mode) == (
        "run_start",
        session_id,
        QUESTION,
        "light",
    )
    assert json.loads(error.model_dump_json())["obj"] == {
        "type": "error",
        "message": f"RuntimeError: {FAILED_BEFORE_START}",
        "recoverable": False,
    }
    assert (stop.obj.type, stop.obj.reason) == ("stop", "error")


class DeadOnArrival(NoRuns):
    """Where runs execute when the engine process dies just as a run is handed to it."""

    refusal = "the engine process has exited"


async def test_a_run_whose_engine_died_as_it_was_handed_over_starts_and_ends() -> None:
    settings = Settings(mode="light")
    store = Store.from_settings(settings)
    manager = RunManager(settings, store, max_runs=1, engine=run_research, executor=DeadOnArrival)
    try:
        store.create_session("s_1", "t")
        await manager.start()
        record = await manager.launch(
            ResearchRequest(question="q", session_id="s_1"),
            session_id="s_1",
            kind="question",
            answers_run_id=None,
            message=None,
        )
        await manager.shutdown()
        start, error, stop = check_stored([row.json for row in store.packets_after(record.id, -1)])
        run = store.get_run(record.id)
    finally:
        store.close()
    assert (start.obj.type, start.obj.mode, error.obj.type, stop.obj.type) == ("run_start", "light", "error", "stop")
    assert error.model_dump()["obj"]["message"] == ENGINE_EXIT_MESSAGE
    assert run is not None and run.status == "error" and manager.active_count == 0

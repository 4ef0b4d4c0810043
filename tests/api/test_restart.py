"""Crash safety: `sleuth serve` killed with SIGKILL mid-run; the restarted server ends the run as
interrupted and it still replays. A graceful stop (SIGTERM) ends live runs the same way."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from conftest import assert_contiguous, read_events, start_research
from sleuth_testkit.model import ScriptedLLM
from sleuth_testkit.scenarios import HangingAudioScript, HangingOrchestrator
from support.processes import ServerProcess

# A bound on each exchange with a fresh `sleuth serve`, whose first run waits for its engine to load
# litellm: on a loaded machine that alone can take tens of seconds.
TIMEOUT_S = 90


def _env(llm: ScriptedLLM) -> dict[str, str]:
    return {
        **os.environ,
        "SLEUTH_MODEL": "openai/scripted",
        "SLEUTH_API_BASE": llm.base_url,
        "SLEUTH_API_KEY": "sk-test-secret",
        "SLEUTH_LLM_BACKOFF_BASE_S": "0.01",
        "SLEUTH_HEARTBEAT_S": "0.5",
    }


@pytest.fixture
def server_env(tmp_path: Path) -> Iterator[dict[str, str]]:
    """As deployed: the engine in a process of its own, which the server's death must not outlive."""
    with ScriptedLLM(HangingOrchestrator()) as llm:
        yield {**_env(llm), "SLEUTH_ENGINE_PROCESSES": "1"}


async def _start_hanging_audio(server: ServerProcess, model: HangingAudioScript) -> str:
    async with httpx.AsyncClient(base_url=server.base_url, timeout=TIMEOUT_S) as client:
        run_id = await start_research(client, clarify=False)
        await read_events(client, run_id)
        report_id = (await client.get(f"/api/runs/{run_id}")).json()["report_id"]
        started = await client.post(f"/api/reports/{report_id}/audio", json={"style": "overview"})
    assert await asyncio.to_thread(model.asked.acquire, True, TIMEOUT_S), "the audio job never asked for its script"
    return started.json()["audio_id"]  # type: ignore[no-any-return]


async def _audio_status(server: ServerProcess, audio_id: str) -> dict[str, Any]:
    async with httpx.AsyncClient(base_url=server.base_url, timeout=TIMEOUT_S) as client:
        return (await client.get(f"/api/audio/{audio_id}")).json()  # type: ignore[no-any-return]


async def test_audio_pending_when_the_server_stops_ends_failed_after_the_restart(tmp_path: Path) -> None:
    model = HangingAudioScript()
    log = tmp_path / "server.log"
    with ScriptedLLM(model) as llm:
        env = _env(llm)
        first = ServerProcess(env, log)
        try:
            killed_id = await _start_hanging_audio(first, model)
            assert (await _audio_status(first, killed_id))["status"] == "pending"
        finally:
            first.stop(signal.SIGKILL)
        second = ServerProcess(env, log)
        try:
            after_kill = await _audio_status(second, killed_id)
            stopped_id = await _start_hanging_audio(second, model)
        finally:
            second.stop(signal.SIGTERM)
        third = ServerProcess(env, log)
        try:
            after_stop = await _audio_status(third, stopped_id)
            untouched = await _audio_status(third, killed_id)
        finally:
            third.stop(signal.SIGTERM)
    assert after_kill["status"] == "failed" and after_kill["url"] is None
    assert after_kill["error"] == "interrupted by a server restart; ask for it again"
    assert after_stop["status"] == "failed"
    assert after_stop["error"] == "interrupted by a server shutdown; ask for it again"
    assert untouched == after_kill  # an ended job stays ended
    assert f"audio {killed_id} was pending when its server stopped" in log.read_text()


async def _start_hanging_run(server: ServerProcess) -> tuple[str, list]:
    async with httpx.AsyncClient(base_url=server.base_url, timeout=TIMEOUT_S) as client:
        run_id = await start_research(client, clarify=False)
        return run_id, await read_events(client, run_id, until_type="plan_done")


async def test_killed_server_leaves_an_interrupted_replayable_run(server_env: dict[str, str], tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    first = ServerProcess(server_env, log)
    try:
        run_id, before = await _start_hanging_run(first)
    finally:
        first.stop(signal.SIGKILL)

    second = ServerProcess(server_env, log)
    try:
        async with httpx.AsyncClient(base_url=second.base_url, timeout=TIMEOUT_S) as client:
            replay = await read_events(client, run_id)
            resumed = await read_events(client, run_id, last_event_id=before[-1].seq)
            run = (await client.get(f"/api/runs/{run_id}")).json()
            session = (await client.get(f"/api/sessions/{run['session_id']}")).json()
            # a graceful stop (SIGTERM) also ends a live run as interrupted
            graceful_id, _ = await _start_hanging_run(second)
    finally:
        second.stop(signal.SIGTERM)
    assert second.proc.returncode in (0, -signal.SIGTERM)  # uvicorn re-raises SIGTERM after a clean shutdown

    assert_contiguous(replay)
    assert [e.data for e in replay[: len(before)]] == [e.data for e in before]
    error, stop = (json.loads(e.data)["obj"] for e in replay[-2:])
    assert error == {"type": "error", "message": "interrupted by server restart", "recoverable": False}
    assert stop == {"type": "stop", "reason": "error"}
    assert [e.data for e in resumed] == [e.data for e in replay[len(before) :]]
    assert run["status"] == "error" and run["error"] == "interrupted by server restart"
    assert session["messages"][-1]["content"] == "interrupted by server restart"

    third = ServerProcess(server_env, log)
    try:
        async with httpx.AsyncClient(base_url=third.base_url, timeout=TIMEOUT_S) as client:
            graceful = await read_events(client, graceful_id)
    finally:
        third.stop(signal.SIGTERM)
    assert_contiguous(graceful)
    assert json.loads(graceful[-2].data)["obj"]["message"] == "interrupted by server shutdown"
    assert json.loads(graceful[-1].data)["obj"] == {"type": "stop", "reason": "error"}
    logs = (Path(server_env["SLEUTH_DATA_DIR"]) / "logs" / "sleuth.jsonl").read_text()
    assert "sk-test-secret" not in logs and '"run_interrupted"' in logs

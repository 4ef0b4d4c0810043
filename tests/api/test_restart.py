"""Crash safety: `sleuth serve` killed with SIGKILL mid-run and mid-audio; the restarted server ends
both as interrupted and the run still replays. A graceful stop (SIGTERM) ends them the same way."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from conftest import assert_contiguous, read_events, start_research
from sleuth_testkit.model import Reply, ScriptedLLM
from sleuth_testkit.scenarios import HangingAudioScript
from support.processes import ServerProcess
from support.sse import Event

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


@dataclass
class HoldingModel(HangingAudioScript):
    """Every audio script hangs; while `hold_runs` is set, so does every run after its plan. One
    model for both, so one server's life holds a pending audio job and a live run at once."""

    hold_runs: bool = False

    def orchestrator(self, body: dict[str, Any]) -> Reply:
        return Reply(hang=True) if self.hold_runs else super().orchestrator(body)


async def _start_hanging_audio(server: ServerProcess, model: HoldingModel) -> str:
    model.hold_runs = False
    async with httpx.AsyncClient(base_url=server.base_url, timeout=TIMEOUT_S) as client:
        run_id = await start_research(client, clarify=False)
        await read_events(client, run_id)
        report_id = (await client.get(f"/api/runs/{run_id}")).json()["report_id"]
        started = await client.post(f"/api/reports/{report_id}/audio", json={"style": "overview"})
    assert await asyncio.to_thread(model.asked.acquire, True, TIMEOUT_S), "the audio job never asked for its script"
    return started.json()["audio_id"]  # type: ignore[no-any-return]


async def _start_hanging_run(server: ServerProcess, model: HoldingModel) -> tuple[str, list[Event]]:
    model.hold_runs = True
    async with httpx.AsyncClient(base_url=server.base_url, timeout=TIMEOUT_S) as client:
        run_id = await start_research(client, clarify=False)
        return run_id, await read_events(client, run_id, until_type="plan_done")


async def _audio_status(client: httpx.AsyncClient, audio_id: str) -> dict[str, Any]:
    return (await client.get(f"/api/audio/{audio_id}")).json()  # type: ignore[no-any-return]


async def test_a_killed_or_stopped_server_ends_its_live_runs_and_audio_and_they_replay(tmp_path: Path) -> None:
    """Three lives of one server: killed with a live run and a pending audio job, restarted and
    stopped gracefully with another of each, started again to read how they ended."""
    model = HoldingModel()
    log = tmp_path / "server.log"
    with ScriptedLLM(model) as llm:
        env = {**_env(llm), "SLEUTH_DATA_DIR": str(tmp_path / "data")}
        # As deployed: the engine in a process of its own, which the server's death must not outlive.
        # The later lives run it on a thread: what they test is the server's, and each engine
        # process is one more import of litellm.
        first = ServerProcess({**env, "SLEUTH_ENGINE_PROCESSES": "1"}, log)
        try:
            killed_audio = await _start_hanging_audio(first, model)
            run_id, before = await _start_hanging_run(first, model)
            async with httpx.AsyncClient(base_url=first.base_url, timeout=TIMEOUT_S) as client:
                assert (await _audio_status(client, killed_audio))["status"] == "pending"
        finally:
            first.stop(signal.SIGKILL)

        second = ServerProcess(env, log)
        try:
            async with httpx.AsyncClient(base_url=second.base_url, timeout=TIMEOUT_S) as client:
                after_kill = await _audio_status(client, killed_audio)
                replay = await read_events(client, run_id)
                resumed = await read_events(client, run_id, last_event_id=before[-1].seq)
                run = (await client.get(f"/api/runs/{run_id}")).json()
                session = (await client.get(f"/api/sessions/{run['session_id']}")).json()
            # a graceful stop (SIGTERM) ends a live run and a pending audio job too
            stopped_audio = await _start_hanging_audio(second, model)
            graceful_id, _ = await _start_hanging_run(second, model)
        finally:
            second.stop(signal.SIGTERM)
        assert second.proc.returncode in (0, -signal.SIGTERM)  # uvicorn re-raises SIGTERM after a clean shutdown

        third = ServerProcess(env, log)
        try:
            async with httpx.AsyncClient(base_url=third.base_url, timeout=TIMEOUT_S) as client:
                graceful = await read_events(client, graceful_id)
                after_stop = await _audio_status(client, stopped_audio)
                untouched = await _audio_status(client, killed_audio)
        finally:
            third.stop(signal.SIGTERM)

    assert after_kill["status"] == "failed" and after_kill["url"] is None
    assert after_kill["error"] == "interrupted by a server restart; ask for it again"
    assert after_stop["status"] == "failed"
    assert after_stop["error"] == "interrupted by a server shutdown; ask for it again"
    assert untouched == after_kill  # an ended job stays ended
    assert f"audio {killed_audio} was pending when its server stopped" in log.read_text()

    assert_contiguous(replay)
    assert [e.data for e in replay[: len(before)]] == [e.data for e in before]
    error, stop = (json.loads(e.data)["obj"] for e in replay[-2:])
    assert error == {"type": "error", "message": "interrupted by server restart", "recoverable": False}
    assert stop == {"type": "stop", "reason": "error"}
    assert [e.data for e in resumed] == [e.data for e in replay[len(before) :]]
    assert run["status"] == "error" and run["error"] == "interrupted by server restart"
    assert session["messages"][-1]["content"] == "interrupted by server restart"

    assert_contiguous(graceful)
    assert json.loads(graceful[-2].data)["obj"]["message"] == "interrupted by server shutdown"
    assert json.loads(graceful[-1].data)["obj"] == {"type": "stop", "reason": "error"}
    logs = (tmp_path / "data" / "logs" / "sleuth.jsonl").read_text()
    assert "sk-test-secret" not in logs and '"run_interrupted"' in logs

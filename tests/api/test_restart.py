"""Crash safety: `sleuth serve` killed with SIGKILL mid-run; the restarted server ends the run as
interrupted and it still replays. A graceful stop (SIGTERM) ends live runs the same way."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from conftest import assert_contiguous, read_events, start_research
from support.net import free_port
from support.scenarios import HangingOrchestrator
from support.scripted_llm import ScriptedLLM


def serve_command(port: int) -> list[str]:
    """`sleuth serve`; `python -m sleuth.api` (the same click command) if the CLI cannot load."""
    script = Path(sys.executable).parent / "sleuth"
    if script.exists() and subprocess.run([script, "serve", "--help"], capture_output=True).returncode == 0:
        return [str(script), "serve", "--host", "127.0.0.1", "--port", str(port)]
    return [sys.executable, "-m", "sleuth.api", "--host", "127.0.0.1", "--port", str(port)]


class ServerProcess:
    def __init__(self, env: dict[str, str], log: Path) -> None:
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self._log = log.open("ab")
        self.proc = subprocess.Popen(serve_command(self.port), env=env, stdout=self._log, stderr=subprocess.STDOUT)
        # Waiting for a port of another process has nothing to await: poll, bounded.
        for _ in range(600):
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited: {log.read_text()[-2000:]}")
            try:
                if httpx.get(f"{self.base_url}/api/health", timeout=1).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            try:
                self.proc.wait(0.05)
            except subprocess.TimeoutExpired:
                pass
        raise RuntimeError("server did not come up")

    def stop(self, sig: int) -> None:
        self.proc.send_signal(sig)
        self.proc.wait(30)
        self._log.close()


@pytest.fixture
def server_env(tmp_path: Path) -> Iterator[dict[str, str]]:
    with ScriptedLLM(HangingOrchestrator()) as llm:
        yield {
            **os.environ,
            "SLEUTH_MODEL": "openai/scripted",
            "SLEUTH_API_BASE": llm.base_url,
            "SLEUTH_API_KEY": "sk-test-secret",
            "SLEUTH_LLM_BACKOFF_BASE_S": "0.01",
            "SLEUTH_HEARTBEAT_S": "0.5",
        }


async def _start_hanging_run(server: ServerProcess) -> tuple[str, list]:
    async with httpx.AsyncClient(base_url=server.base_url, timeout=30) as client:
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
        async with httpx.AsyncClient(base_url=second.base_url, timeout=30) as client:
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
        async with httpx.AsyncClient(base_url=third.base_url, timeout=30) as client:
            graceful = await read_events(client, graceful_id)
    finally:
        third.stop(signal.SIGTERM)
    assert_contiguous(graceful)
    assert json.loads(graceful[-2].data)["obj"]["message"] == "interrupted by server shutdown"
    assert json.loads(graceful[-1].data)["obj"] == {"type": "stop", "reason": "error"}
    logs = (Path(server_env["SLEUTH_DATA_DIR"]) / "logs" / "sleuth.jsonl").read_text()
    assert "sk-test-secret" not in logs and '"run_interrupted"' in logs


async def test_a_dead_engine_process_ends_its_runs_and_is_replaced(hanging_server) -> None:
    manager = hanging_server.app_state.manager
    async with httpx.AsyncClient(base_url=hanging_server.base_url, timeout=30) as client:
        run_id = await start_research(client, clarify=False)
        await read_events(client, run_id, until_type="plan_done")
        old_pid = manager.executor.pid_of(run_id)
        os.kill(old_pid, signal.SIGKILL)
        events = await read_events(client, run_id)
        assert json.loads(events[-2].data)["obj"]["message"] == "interrupted: the engine process exited"
        assert json.loads(events[-1].data)["obj"] == {"type": "stop", "reason": "error"}
        assert_contiguous(events)
        # the next run gets a fresh engine process
        second = await start_research(client, clarify=False)
        await read_events(client, second, until_type="plan_done")
        assert manager.executor.pid_of(second) not in (None, old_pid)
        assert old_pid not in manager.executor.pids
        await client.post(f"/api/runs/{second}/cancel")

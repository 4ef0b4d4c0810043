"""Scale-out end to end when a process dies, stops or is started with settings of its own: each
test starts its own `sleuth serve` and `sleuth worker` processes on one PostgreSQL schema and one
Redis prefix, the scripted model behind litellm. Nothing is mocked: runs are queued, taken by a
worker, streamed through Redis to whichever server a client asks. What needs none of that shares
one cluster in `test_across_servers.py`."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

from sleuth.audio.jobs import LOST_MESSAGE
from sleuth.scaleout.reaper import LEASE_EXPIRED_MESSAGE, NOT_QUEUED_MESSAGE
from sleuth_testkit.model import ScriptedLLM
from sleuth_testkit.scenarios import HangingAudioScript, HangingOrchestrator, ResearchModel
from support.cluster import EXPIRING_LEASE_S, cluster
from support.mcp import McpModel, stdio_entry, write_servers
from support.processes import ServerProcess
from support.scaleout import TIMEOUT, GatedOrchestrator, client_for, obj, read_back, stored_packets, unstarted
from support.sse import assert_contiguous, read_events, start_research


@pytest.fixture
def gated() -> Iterator[tuple[GatedOrchestrator, ScriptedLLM]]:
    model = GatedOrchestrator()
    with ScriptedLLM(model) as llm:
        yield model, llm
        model.gate.set()


@pytest.fixture
def hanging_llm() -> Iterator[ScriptedLLM]:
    with ScriptedLLM(HangingOrchestrator()) as llm:
        yield llm


async def test_cancelling_a_queued_run_ends_it_at_once(hanging_llm: ScriptedLLM, tmp_path: Path) -> None:
    # One worker taking one run at a time: the second run waits in the queue, where no worker
    # would hear a cancel until the first run ends.
    with cluster(hanging_llm, tmp_path / "logs", servers=2, workers=1, concurrency=1) as running:
        a, b = running.servers
        async with client_for(a.base_url) as on_a, client_for(b.base_url) as on_b:
            held = await start_research(on_a, clarify=False)
            await read_events(on_a, held, until_type="plan_done")
            queued = await start_research(on_a, clarify=False)
            cancelled = await on_b.post(f"/api/runs/{queued}/cancel")
            async with asyncio.timeout(TIMEOUT):  # unfixed, it would wait for the held run to end
                events = await read_events(on_a, queued)
            run = (await on_b.get(f"/api/runs/{queued}")).json()
            health = (await on_a.get("/api/health")).json()
            messages = (await on_a.get(f"/api/sessions/{run['session_id']}")).json()["messages"]
            still = (await on_b.get(f"/api/runs/{held}")).json()["status"]
            await on_a.post(f"/api/runs/{held}/cancel")
        stored = stored_packets(running.env, queued)
        with psycopg.connect(running.env["SLEUTH_DATABASE_URL"]) as conn:
            query = "SELECT count(*) FROM procrastinate_jobs WHERE args->>'run_id' = %s"
            left = conn.execute(query, (queued,)).fetchone()
    # The answer already says it ended: it did not wait for a worker to become free.
    assert cancelled.json() == {"run_id": queued, "status": "cancelled", "cancelled": True}
    # Every run starts with `run_start`, this one too: the question as asked, no model called yet.
    assert [obj(e) for e in events] == [unstarted(run["session_id"]), {"type": "stop", "reason": "cancelled"}]
    assert [e.data for e in events] == stored
    assert run["status"] == "cancelled" and run["stop_reason"] == "cancelled"
    assert [m["content"] for m in messages if m["role"] == "assistant"] == ["Research cancelled."]
    assert health["active_runs"] == 1  # its slot is free again; the held run keeps its own
    assert health["ready"] is True  # scaled out, no engines here: the workers warm up and check
    assert still == "running"
    assert left == (0,)  # withdrawn from the queue: no worker will ever take it


async def test_a_worker_subscribes_again_after_losing_its_control_connection(
    hanging_llm: ScriptedLLM, tmp_path: Path
) -> None:
    # Leases far longer than the test: a cancel can only arrive over pub/sub or the catch-up that
    # follows every new subscription, not the periodic check.
    with cluster(hanging_llm, tmp_path / "logs", servers=1, workers=1, SLEUTH_RUN_LEASE_S="600") as running:
        (server,) = running.servers
        (worker,) = running.workers
        async with client_for(server.base_url) as client:
            run_id = await start_research(client, clarify=False)
            before = await read_events(client, run_id, until_type="plan_done")
            with running.redis() as redis_client:
                name = f"-{worker.pid}"
                killed = [
                    redis_client.client_kill_filter(_id=c["id"])
                    for c in redis_client.client_list(_type="pubsub")
                    if c["name"].endswith(name)
                ]
                channel = f"{running.prefix}:control"
                worker.wait_until(lambda: redis_client.pubsub_numsub(channel)[0][1] == 1, "resubscribed worker")
            cancelled = await client.post(f"/api/runs/{run_id}/cancel")
            async with asyncio.timeout(TIMEOUT):  # the run hangs until it is cancelled
                after = await read_events(client, run_id, last_event_id=before[-1].seq)
    assert killed == [1]
    assert cancelled.json()["status"] == "cancelled"
    assert obj(after[-1]) == {"type": "stop", "reason": "cancelled"}


async def test_runs_whose_server_died_while_launching_them_are_ended(tmp_path: Path) -> None:
    # No worker: the run stays queued until the test takes its job away, as if its server had
    # died after storing it but before queueing it.
    with (
        ScriptedLLM(ResearchModel()) as llm,
        cluster(llm, tmp_path / "logs", servers=1, workers=0, SLEUTH_RUN_LEASE_S=EXPIRING_LEASE_S) as running,
    ):
        (server,) = running.servers
        async with client_for(server.base_url) as client:
            run_id = await start_research(client, clarify=False)
            with psycopg.connect(running.env["SLEUTH_DATABASE_URL"]) as conn:
                conn.execute("DELETE FROM procrastinate_jobs WHERE queueing_lock = %s", (run_id,))
            with running.redis() as redis_client:  # admitted, and its server died before storing it
                redis_client.hset(f"{running.prefix}:active", "r_never_stored", "s_never_stored")
            async with asyncio.timeout(TIMEOUT):
                events = await read_events(client, run_id)
            run = (await client.get(f"/api/runs/{run_id}")).json()

            def health() -> Any:
                return httpx.get(f"{server.base_url}/api/health", timeout=TIMEOUT).json()

            server.wait_until(lambda: health()["active_runs"] == 0, "both slots free")
    assert [obj(e) for e in events] == [
        unstarted(run["session_id"]),
        {"type": "error", "message": NOT_QUEUED_MESSAGE, "recoverable": False},
        {"type": "stop", "reason": "error"},
    ]
    assert run["status"] == "error" and run["error"] == NOT_QUEUED_MESSAGE


async def test_a_killed_worker_ends_its_run_when_the_lease_expires(hanging_llm: ScriptedLLM, tmp_path: Path) -> None:
    with cluster(hanging_llm, tmp_path / "logs", SLEUTH_RUN_LEASE_S=EXPIRING_LEASE_S) as running:
        a, b = running.servers
        async with client_for(a.base_url) as on_a, client_for(b.base_url) as on_b:
            run_id = await start_research(on_a, clarify=False)
            before = await read_events(on_b, run_id, until_type="plan_done")
            pid = running.holder_pid(run_id)
            assert pid is not None and pid in [w.pid for w in running.workers]
            os.kill(pid, signal.SIGKILL)
            # No one tells the servers: the lease lapses and a reaper (server or the other worker) ends it.
            after = await read_events(on_b, run_id, last_event_id=before[-1].seq)
            run = (await on_a.get(f"/api/runs/{run_id}")).json()
            # The surviving worker takes the next run.
            second = await start_research(on_a, clarify=False)
            await read_events(on_b, second, until_type="plan_done")
            survivor = running.holder_pid(second)
            await on_b.post(f"/api/runs/{second}/cancel")
        replay = await read_back(a.base_url, run_id)
    assert [obj(e) for e in after[-2:]] == [
        {
            "type": "error",
            "message": LEASE_EXPIRED_MESSAGE,
            "recoverable": False,
        },
        {"type": "stop", "reason": "error"},
    ]
    assert_contiguous(before + after)
    assert [e.data for e in before + after] == [e.data for e in replay]
    assert run["status"] == "error"
    assert survivor is not None and survivor != pid


async def test_a_killed_server_mid_stream_resumes_on_the_other(
    gated: tuple[GatedOrchestrator, ScriptedLLM], tmp_path: Path
) -> None:
    model, llm = gated
    with cluster(llm, tmp_path / "logs", workers=1) as running:
        a, b = running.servers
        async with client_for(a.base_url) as on_a:
            run_id = await start_research(on_a, clarify=False)
            before = await read_events(on_a, run_id, until_type="plan_done")
        a.stop(signal.SIGKILL)
        model.gate.set()  # the run goes on on its worker, whatever happened to the server
        async with client_for(b.base_url) as on_b:
            after = await read_events(on_b, run_id, last_event_id=before[-1].seq)
            status = (await on_b.get(f"/api/runs/{run_id}")).json()["status"]
        replay = await read_back(b.base_url, run_id)
    assert_contiguous(before + after)
    assert [e.data for e in before + after] == [e.data for e in replay]
    assert obj(after[-1]) == {"type": "stop", "reason": "completed"} and status == "completed"


async def test_a_stopped_worker_ends_its_runs_as_interrupted(hanging_llm: ScriptedLLM, tmp_path: Path) -> None:
    with cluster(hanging_llm, tmp_path / "logs", servers=1, workers=1) as running:
        (server,) = running.servers
        (worker,) = running.workers
        async with client_for(server.base_url) as client:
            run_id = await start_research(client, clarify=False)
            before = await read_events(client, run_id, until_type="plan_done")
            worker.stop(signal.SIGTERM)
            after = await read_events(client, run_id, last_event_id=before[-1].seq)
            run = (await client.get(f"/api/runs/{run_id}")).json()
            health = (await client.get("/api/health")).json()
    assert worker.proc.returncode == 0
    assert [obj(e) for e in after[-2:]] == [
        {"type": "error", "message": "interrupted by server shutdown", "recoverable": False},
        {"type": "stop", "reason": "error"},
    ]
    assert_contiguous(before + after)
    assert run["status"] == "error" and health["active_runs"] == 0  # its slot is free again


async def test_audio_being_made_by_a_killed_server_is_ended_by_another(tmp_path: Path) -> None:
    model = HangingAudioScript()
    limit = {"SLEUTH_AUDIO_MAX_JOBS_CLUSTER": "1"}
    with ScriptedLLM(model) as llm, cluster(llm, tmp_path / "logs", workers=1, **limit) as running:
        a, b = running.servers
        async with client_for(a.base_url) as on_a:
            run_id = await start_research(on_a, clarify=False)
            await read_events(on_a, run_id)
            report_id = (await on_a.get(f"/api/runs/{run_id}")).json()["report_id"]
            started = await on_a.post(f"/api/reports/{report_id}/audio", json={"style": "overview"})
        assert await asyncio.to_thread(model.asked.acquire, True, TIMEOUT), "the audio job never asked for its script"
        audio_id = started.json()["audio_id"]
        # The one audio job the cluster may make is on A: B gives that one for the same report and style,
        # and refuses another, although B itself makes none.
        async with client_for(b.base_url) as on_b:
            same_on_b = await on_b.post(f"/api/reports/{report_id}/audio", json={"style": "overview"})
            full_on_b = await on_b.post(f"/api/reports/{report_id}/audio", json={"style": "dialogue"})
        # A server starting while another makes audio leaves that job alone (its holder is alive).
        b.stop(signal.SIGTERM)
        c = ServerProcess(running.env, tmp_path / "logs" / "server-c.log")
        running.servers.append(c)
        async with client_for(c.base_url) as on_c:
            while_held = (await on_c.get(f"/api/audio/{audio_id}")).json()
            a.stop(signal.SIGKILL)

            def status() -> Any:
                return httpx.get(f"{c.base_url}/api/audio/{audio_id}", timeout=TIMEOUT).json()["status"]

            c.wait_until(lambda: status() == "failed", "the lost audio job ended")
            ended = (await on_c.get(f"/api/audio/{audio_id}")).json()
            # The dead server's lease has lapsed: its slot is free, and the failed audio is made again.
            again = await on_c.post(f"/api/reports/{report_id}/audio", json={"style": "overview"})
    assert same_on_b.status_code == 200 and same_on_b.json()["audio_id"] == audio_id
    assert full_on_b.status_code == 429 and int(full_on_b.headers["Retry-After"]) > 0
    assert full_on_b.json() == {"detail": "the servers are making their maximum of 1 audio files at once; retry later"}
    assert while_held["status"] == "pending"
    assert ended["status"] == "failed" and ended["error"] == LOST_MESSAGE
    assert again.status_code == 202 and again.json()["audio_id"] != audio_id


async def test_a_worker_runs_mcp_tools_tells_the_servers_their_states_and_closes_them(tmp_path: Path) -> None:
    servers = write_servers(
        tmp_path / "mcp.json",
        {"fixture": stdio_entry(), "stuck": stdio_entry("--hang", "--name", "stuck", init_timeout_s=1)},
    )
    with ScriptedLLM(McpModel()) as llm:
        with cluster(llm, tmp_path / "logs", servers=1, workers=1, SLEUTH_MCP_CONFIG=str(servers)) as running:
            (server,) = running.servers
            async with client_for(server.base_url) as client:
                run_id = await start_research(client, "How do descriptors work?", clarify=False, mode="light")
                packets = [json.loads(event.data) for event in await read_events(client, run_id)]
                # the worker said how its engine's servers started before the run's `stop` went out
                listed = {s["name"]: s for s in (await client.get("/api/sources")).json() if s["kind"] == "mcp"}
            running.stop()
    report = next(p["obj"] for p in packets if p["obj"]["type"] == "report")
    assert any(s["url"].startswith("mcp://fixture/lookup_notes?args=") for s in report["sources"])
    assert (listed["fixture"]["state"], listed["fixture"]["tools"]) == ("ready", 7)
    assert (listed["stuck"]["state"], listed["stuck"]["reason"]) == ("unavailable", "did not start within 1 s")
    # the worker's engine closed the server it started when the worker stopped
    log = (Path(os.environ["SLEUTH_DATA_DIR"]) / "logs" / "mcp-servers.log").read_text(encoding="utf-8").splitlines()
    assert [line for line in log if line.startswith("fixture server fixture")] == [
        "fixture server fixture starting",
        "fixture server fixture stopped",
    ]

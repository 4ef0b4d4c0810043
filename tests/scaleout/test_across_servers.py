"""Scale-out across servers, on one cluster the module's tests share: two `sleuth serve` and two
`sleuth worker` processes on one PostgreSQL schema and one Redis prefix, the scripted model behind
litellm, whose script each test sets. These tests kill no process and change no setting; each one
ends with no run left going (the `between_tests` fixture cancels what a failed test left), so the
next finds the cluster as it started. The tests that kill or stop a process, or need settings of
their own, start their own cluster in `test_scaleout.py`."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

import httpx
import psycopg
import pytest

from sleuth.research.planning.review import PlanAnswer
from sleuth.scaleout.control import ControlMessage, encode
from sleuth_testkit.model import Responder, ScriptedLLM
from sleuth_testkit.scenarios import HangingOrchestrator, ResearchModel
from support.cluster import Cluster, cluster
from support.scaleout import TIMEOUT, GatedOrchestrator, client_for, obj, read_back, stored_packets
from support.sse import QUESTION, assert_contiguous, document_urls, read_events, start_research

MAX_RUNS = 2  # for the run limit's test; every other test has one run going at a time


@dataclass
class Shared:
    running: Cluster
    llm: ScriptedLLM

    def script(self, model: Responder) -> None:
        """What the model answers from now on, on every server and worker."""
        self.llm.respond = model


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Shared]:
    with (
        ScriptedLLM(ResearchModel()) as llm,
        cluster(llm, tmp_path_factory.mktemp("shared-logs"), SLEUTH_MAX_RUNS=str(MAX_RUNS)) as running,
    ):
        yield Shared(running, llm)


@pytest.fixture(autouse=True)
def between_tests(shared: Shared) -> Iterator[None]:
    shared.script(ResearchModel())
    yield
    # What a test left going (a failed one, or a hanging run it did not need to end) is cancelled, and
    # the next test starts once every slot is free again.
    server = shared.running.servers[0]
    with shared.running.redis() as redis_client:
        left = list(redis_client.hkeys(f"{shared.running.prefix}:active"))
    for run_id in left:
        httpx.post(f"{server.base_url}/api/runs/{run_id}/cancel", timeout=TIMEOUT)

    def idle() -> bool:
        return bool(httpx.get(f"{server.base_url}/api/health", timeout=TIMEOUT).json()["active_runs"] == 0)

    server.wait_until(idle, "every run slot free")


@pytest.fixture
def gated(shared: Shared) -> Iterator[GatedOrchestrator]:
    model = GatedOrchestrator()
    shared.script(model)
    yield model
    model.gate.set()


@pytest.fixture
def hanging(shared: Shared) -> None:
    shared.script(HangingOrchestrator())


async def test_stream_from_another_server_cut_and_resume_across_servers(
    shared: Shared, gated: GatedOrchestrator
) -> None:
    a, b = shared.running.servers
    async with client_for(a.base_url) as on_a, client_for(b.base_url) as on_b:
        run_id = await start_research(on_a, clarify=False)
        first = await read_events(on_b, run_id, until_type="plan_done")  # cut here, mid-run
        gated.gate.set()
        second = await read_events(on_a, run_id, last_event_id=first[-1].seq, limit=3)
        rest = await read_events(on_b, run_id, last_event_id=second[-1].seq)
        # `stop` is only sent once the outcome is stored: whoever gets it finds the run ended.
        status = (await on_a.get(f"/api/runs/{run_id}")).json()["status"]
    replay = await read_back(b.base_url, run_id)
    stored = stored_packets(shared.running.env, run_id)
    streamed = first + second + rest
    assert_contiguous(streamed)
    assert [e.data for e in streamed] == [e.data for e in replay] == stored
    assert obj(streamed[-1]) == {"type": "stop", "reason": "completed"}
    assert status == "completed"


async def test_cancel_from_the_other_server_reaches_the_worker(shared: Shared, hanging: None) -> None:
    a, b = shared.running.servers
    async with client_for(a.base_url) as on_a, client_for(b.base_url) as on_b:
        run_id = await start_research(on_a, clarify=False)
        before = await read_events(on_a, run_id, until_type="plan_done")
        cancelled = await on_b.post(f"/api/runs/{run_id}/cancel")
        after = await read_events(on_a, run_id, last_event_id=before[-1].seq)
        again = await on_a.post(f"/api/runs/{run_id}/cancel")
    assert cancelled.status_code == 200
    assert cancelled.json() == {"run_id": run_id, "status": "cancelled", "cancelled": True}
    assert obj(after[-1]) == {"type": "stop", "reason": "cancelled"}
    assert_contiguous(before + after)
    assert again.json()["cancelled"] is False  # an ended run stays as it is


async def test_a_cancel_whose_message_was_lost_still_reaches_the_worker(shared: Shared, hanging: None) -> None:
    running = shared.running
    async with client_for(running.servers[0].base_url) as client:
        run_id = await start_research(client, clarify=False)
        before = await read_events(client, run_id, until_type="plan_done")
        with running.redis() as redis_client:  # the cancel as a server leaves it, never published
            redis_client.set(f"{running.prefix}:run:{run_id}:cancel", "1")
        async with asyncio.timeout(TIMEOUT):  # the run hangs until it is cancelled
            after = await read_events(client, run_id, last_event_id=before[-1].seq)
    assert obj(after[-1]) == {"type": "stop", "reason": "cancelled"}
    assert_contiguous(before + after)


async def test_a_plan_answer_whose_message_was_lost_still_reaches_the_worker(shared: Shared) -> None:
    running = shared.running
    async with client_for(running.servers[0].base_url) as client:
        run_id = await start_research(client, clarify=False, review_plan=True)
        waiting = await read_events(client, run_id, until_type="plan_review")
        answer = encode(ControlMessage("plan", run_id, PlanAnswer(approve=True, steps=None, feedback=None)))
        with running.redis() as redis_client:  # claimed as a server claims it, never published
            redis_client.set(f"{running.prefix}:run:{run_id}:plan:{waiting[-1].seq}", answer)
        async with asyncio.timeout(TIMEOUT):  # unanswered, the review waits out its own timeout
            rest = await read_events(client, run_id, last_event_id=waiting[-1].seq)
    assert obj(rest[0])["outcome"] == "approved"
    assert obj(rest[-1]) == {"type": "stop", "reason": "completed"}


async def test_plan_review_answered_on_another_server(shared: Shared) -> None:
    a, b = shared.running.servers
    async with client_for(a.base_url) as on_a, client_for(b.base_url) as on_b:
        run_id = await start_research(on_a, clarify=False, review_plan=True)
        waiting = await read_events(on_b, run_id, until_type="plan_review")
        answered = await on_b.post(f"/api/runs/{run_id}/plan", json={"approve": True})
        twice = await on_a.post(f"/api/runs/{run_id}/plan", json={"approve": True})
        rest = await read_events(on_a, run_id, last_event_id=waiting[-1].seq)
    assert answered.status_code == 200 and answered.json() == {"run_id": run_id, "accepted": True}
    assert twice.status_code == 409  # one answer per review, whichever server it reaches
    assert obj(rest[0]) == {"type": "plan_reviewed", "outcome": "approved", "steps": obj(waiting[-1])["steps"]}
    assert obj(rest[-1]) == {"type": "stop", "reason": "completed"}
    assert_contiguous(waiting + rest)


async def test_a_document_uploaded_through_a_server_is_searched_by_the_worker(shared: Shared) -> None:
    # The servers and workers share one data dir (as docker-compose's volume does): the library is there.
    a, b = shared.running.servers
    async with client_for(a.base_url) as on_a, client_for(b.base_url) as on_b:
        text = b"# Notes\n\nThe descriptor protocol: __get__, __set__ and the __getattr__ fallback.\n"
        uploaded = await on_a.post(
            "/api/collections/notes/documents", files=[("files", ("notes.md", text, "text/markdown"))]
        )
        run_id = await start_research(on_b, sources=["notes"], clarify=False)
        events = [json.loads(e.data) for e in await read_events(on_a, run_id)]
    assert uploaded.status_code == 201, uploaded.text
    urls = document_urls(events)
    assert urls and all(url.startswith("corpus://notes/") for url in urls), urls
    assert events[-1]["obj"] == {"type": "stop", "reason": "completed"}


async def test_a_worker_searches_only_what_the_runs_owner_sees(shared: Shared) -> None:
    # A run is its session's owner's: the job carries the owner, and the worker's search, routing and
    # `run_start.sources` leave out another user's private upload (here Dave's, Carol's session).
    a, b = shared.running.servers
    env = shared.running.env
    corpus = Path(env["SLEUTH_DATA_DIR"]) / "corpus.db"
    async with client_for(a.base_url) as on_a, client_for(b.base_url) as on_b:
        text = b"# Daves notes\n\nThe descriptor protocol: __get__, __set__ and the __getattr__ fallback.\n"
        uploaded = await on_a.post(
            "/api/collections/daves/documents", files=[("files", ("d.md", text, "text/markdown"))]
        )
        assert uploaded.status_code == 201, uploaded.text
        session_id = (await on_a.post("/api/sessions", json={})).json()["id"]
        with closing(sqlite3.connect(corpus)) as conn, conn:
            conn.execute("UPDATE collections SET owner_id = 'u_dave' WHERE name = 'daves'")
        with psycopg.connect(env["SLEUTH_DATABASE_URL"]) as conn:
            conn.execute("UPDATE sessions SET owner_id = 'u_carol' WHERE id = %s", (session_id,))
        try:
            started = await on_b.post(
                f"/api/sessions/{session_id}/messages", json={"content": QUESTION, "clarify": False}
            )
            assert started.status_code == 202, started.text
            events = [json.loads(e.data) for e in await read_events(on_a, started.json()["run_id"])]
        finally:
            with closing(sqlite3.connect(corpus)) as conn, conn:
                conn.execute("DELETE FROM collections WHERE name = 'daves'")
    assert events[0]["obj"]["sources"] and "daves" not in events[0]["obj"]["sources"]
    assert not [url for url in document_urls(events) if url.startswith("corpus://daves/")]
    assert events[-1]["obj"] == {"type": "stop", "reason": "completed"}


async def test_the_run_limit_holds_across_servers(shared: Shared, hanging: None) -> None:
    a, b = shared.running.servers
    async with client_for(a.base_url) as on_a, client_for(b.base_url) as on_b:
        first = await start_research(on_a, clarify=False)
        await start_research(on_b, clarify=False)
        sessions_before = len((await on_a.get("/api/sessions")).json())
        refused = [await c.post("/api/research", json={"question": "A third one?"}) for c in (on_a, on_b)]
        sessions_after = len((await on_b.get("/api/sessions")).json())
        health = (await on_b.get("/api/health")).json()
        await on_b.post(f"/api/runs/{first}/cancel")
        accepted = await on_a.post("/api/research", json={"question": "Now?", "clarify": False})
    assert [r.status_code for r in refused] == [429, 429]
    assert all(r.headers["Retry-After"] for r in refused)
    assert sessions_after == sessions_before  # a refused run creates no session
    assert health["active_runs"] == MAX_RUNS and health["max_runs"] == MAX_RUNS
    assert accepted.status_code == 202


async def test_the_servers_refuse_research_on_the_workers_model_check(shared: Shared) -> None:
    # The servers import no litellm: what they know of the models is what the ready workers said.
    running = shared.running
    key = f"{running.prefix}:models"
    problem = "the model openai/x needs OPENAI_API_KEY (for a key, SLEUTH_API_KEY works too)"
    with running.redis() as redis_client:
        running.servers[0].wait_until(lambda: redis_client.get(key) is not None, "a worker's model check")
        published = redis_client.get(key)
        redis_client.set(key, problem)  # as a worker without the key publishes it
        try:
            async with client_for(running.servers[1].base_url) as client:
                refused = await client.post("/api/research", json={"question": "Why?", "clarify": False})
        finally:
            redis_client.set(key, "")
    assert published == ""  # the ready workers found the models callable
    assert refused.status_code == 400
    assert refused.json() == {"detail": f"research cannot start: {problem}"}

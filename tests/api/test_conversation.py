"""Sessions: a message after clarification answers it; later questions get earlier reports as history."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest

from conftest import QUESTION, LiveServer, live_server, read_events
from sleuth_testkit.engine import scripted_settings
from sleuth_testkit.model import ScriptedLLM, user_text
from sleuth_testkit.scenarios import ResearchModel

QUESTIONS = "1. Which Python version do you mean?\n2. CPython or PyPy?"
ANSWER = "Python 3.12 on CPython, please."


@pytest.fixture
def clarifying_llm() -> Iterator[ScriptedLLM]:
    with ScriptedLLM(ResearchModel(clarify_questions=QUESTIONS)) as scripted:
        yield scripted


@pytest.fixture
def clarifying_server(clarifying_llm: ScriptedLLM) -> Iterator[LiveServer]:
    with live_server(scripted_settings(clarifying_llm)) as live:
        yield live


async def send(client: httpx.AsyncClient, session_id: str, content: str) -> dict:
    response = await client.post(f"/api/sessions/{session_id}/messages", json={"content": content})
    assert response.status_code == 202, response.text
    return response.json()


async def test_clarification_then_answer_then_follow_up(
    clarifying_server: LiveServer, clarifying_llm: ScriptedLLM
) -> None:
    async with httpx.AsyncClient(base_url=clarifying_server.base_url, timeout=60) as client:
        session = (await client.post("/api/sessions", json={})).json()
        sid = session["id"]

        first = await send(client, sid, QUESTION)
        assert first["kind"] == "question"
        events = await read_events(client, first["run_id"])
        assert json.loads(events[-1].data)["obj"]["reason"] == "clarification"
        run1 = (await client.get(f"/api/runs/{first['run_id']}")).json()
        assert run1["status"] == "waiting_for_input" and len(run1["clarification_questions"]) == 2

        second = await send(client, sid, ANSWER)
        assert second["kind"] == "clarification_answer"
        events = await read_events(client, second["run_id"])
        assert json.loads(events[-1].data)["obj"]["reason"] == "completed"
        run_start = json.loads(events[0].data)["obj"]
        assert run_start["question"] == QUESTION and run_start["session_id"] == sid
        run2 = (await client.get(f"/api/runs/{second['run_id']}")).json()
        assert run2["answers_run_id"] == first["run_id"] and run2["status"] == "completed"
        report = (await client.get(f"/api/reports/{run2['report_id']}")).json()

        third = await send(client, sid, "And how does __slots__ change that?")
        assert third["kind"] == "question"
        await read_events(client, third["run_id"])
        detail = (await client.get(f"/api/sessions/{sid}")).json()

    # clarification was asked once for the first question and skipped for its answer ...
    clarifier_calls = clarifying_llm.requests_for("clarifier")
    assert len(clarifier_calls) == 2  # question 1 and question 3
    assert ANSWER in json.dumps(clarifying_llm.requests_for("planner")[0])
    # ... and the follow-up's clarifier saw the earlier report as history
    assert report["markdown"].splitlines()[0][:40] in user_text(clarifier_calls[1]) + json.dumps(clarifier_calls[1])
    assert detail["title"].startswith("How do Python descriptors")
    assert [m["role"] for m in detail["messages"]] == ["user", "assistant"] * 3
    assert [r["kind"] for r in detail["runs"]] == ["question", "clarification_answer", "question"]
    assert detail["messages"][1]["content"] == "\n".join(run1["clarification_questions"])


async def test_reports_as_json_and_markdown_and_session_listing(server: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=server.base_url, timeout=60) as client:
        created = (
            await client.post("/api/research", json={"question": QUESTION, "mode": "light", "clarify": False})
        ).json()
        await read_events(client, created["run_id"])
        run = (await client.get(f"/api/runs/{created['run_id']}")).json()
        report = (await client.get(f"/api/reports/{run['report_id']}")).json()
        markdown = await client.get(f"/api/reports/{run['report_id']}.md")
        sessions = (await client.get("/api/sessions")).json()
    assert report["status"] == "completed" and report["question"] == QUESTION
    assert report["run_id"] == created["run_id"] and report["session_id"] == created["session_id"]
    assert report["sources"] and report["title"] and report["created_at"] and report["input_tokens"] > 0
    assert markdown.headers["content-type"].startswith("text/markdown")
    assert markdown.text.startswith(f"# {QUESTION}\n\n") and report["markdown"].strip() in markdown.text
    assert "\n## Sources\n\n1. [" in markdown.text and markdown.text.endswith("\n")
    assert [s["id"] for s in sessions] == [created["session_id"]]
    assert run["mode"] == "light"

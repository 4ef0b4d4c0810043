"""Follow-ups over HTTP: answered from the report and its sources as message packets, without new research."""

from __future__ import annotations

import json

import httpx

from conftest import LiveServer, read_events, start_research
from sleuth_testkit.model import ScriptedLLM


def _objs(events: list) -> list[dict]:  # type: ignore[type-arg]
    return [json.loads(e.data)["obj"] for e in events]


async def test_a_followup_is_answered_from_the_report_with_its_numbering(server: LiveServer, llm: ScriptedLLM) -> None:
    async with httpx.AsyncClient(base_url=server.base_url, timeout=60) as client:
        run_id = await start_research(client, clarify=False)
        await read_events(client, run_id)
        run = (await client.get(f"/api/runs/{run_id}")).json()
        report = (await client.get(f"/api/reports/{run['report_id']}")).json()
        research_calls = len(llm.requests_for("agent")) + len(llm.requests_for("orchestrator"))

        asked = await client.post(
            f"/api/sessions/{run['session_id']}/messages", json={"content": "Which wins?", "followup": True}
        )
        answer = _objs(await read_events(client, asked.json()["run_id"]))
        declined_run = await client.post(
            f"/api/sessions/{run['session_id']}/messages",
            json={"content": "What is the capital of France?", "followup": True, "report_id": run["report_id"]},
        )
        declined = _objs(await read_events(client, declined_run.json()["run_id"]))
        session = (await client.get(f"/api/sessions/{run['session_id']}")).json()
    assert asked.status_code == 202
    kinds = [o["type"] for o in answer]
    assert kinds[0] == "run_start" and answer[0]["mode"] == "followup"
    assert "message_start" in kinds and "message_delta" in kinds
    assert not {"plan_start", "top_level_branching", "research_agent_start", "report"} & set(kinds)
    assert len(llm.requests_for("agent")) + len(llm.requests_for("orchestrator")) == research_calls  # no research
    text = "".join(o["content"] for o in answer if o["type"] == "message_delta")
    assert text.startswith("Data descriptors win over the instance dictionary [1], never")
    first = next(s for s in report["sources"] if s["number"] == 1)
    citations = [o for o in answer if o["type"] == "citation_info"]
    assert [(c["citation_number"], c["document_id"]) for c in citations] == [(1, first["id"])]  # [99] is not a source
    # the model saw the report and the texts of its sources, in the report's numbering
    prompt = llm.requests_for("followup")[0]["messages"][1]["content"]
    assert report["markdown"][:200] in prompt and f"[1] {first['title']}\nURL: {first['url']}" in prompt
    # not in the report: it says so, and offers to research it
    declined_text = "".join(o["content"] for o in declined if o["type"] == "message_delta")
    assert "do not answer this" in declined_text and "new message to research it" in declined_text
    assert [m["role"] for m in session["messages"]][-4:] == ["user", "assistant", "user", "assistant"]
    assert "[1]" in session["messages"][-3]["content"] and "[99]" not in session["messages"][-3]["content"]
    assert session["title"] == run["question"]  # a follow-up does not rename the session


async def test_a_followup_needs_a_finished_report(server: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=server.base_url, timeout=60) as client:
        session = (await client.post("/api/sessions", json={})).json()
        refused = await client.post(
            f"/api/sessions/{session['id']}/messages", json={"content": "Which wins?", "followup": True}
        )
    assert refused.status_code == 409 and "no finished report" in refused.json()["detail"]

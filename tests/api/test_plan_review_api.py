"""Plan review over HTTP: the answer travels from POST /api/runs/{id}/plan to the engine process."""

from __future__ import annotations

import json

import httpx
import pytest

from conftest import LiveServer, read_events, start_research


@pytest.fixture
def server(shared_server: LiveServer) -> LiveServer:
    """Every test here reads only its own run, so they share one server."""
    return shared_server


def _obj(event_data: str) -> dict:  # type: ignore[type-arg]
    return json.loads(event_data)["obj"]  # type: ignore[no-any-return]


async def test_approve_over_http_then_the_run_completes(server: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=server.base_url, timeout=60) as client:
        run_id = await start_research(client, clarify=False, review_plan=True)
        waiting = await read_events(client, run_id, until_type="plan_review")
        assert (await client.get(f"/api/runs/{run_id}")).json()["status"] == "running"
        answered = await client.post(f"/api/runs/{run_id}/plan", json={"approve": True})
        rest = await read_events(client, run_id, last_event_id=waiting[-1].seq)
        again = await client.post(f"/api/runs/{run_id}/plan", json={"approve": True})
    assert answered.status_code == 200 and answered.json() == {"run_id": run_id, "accepted": True}
    assert _obj(waiting[-1].data)["steps"]
    assert _obj(rest[0].data) == {
        "type": "plan_reviewed",
        "outcome": "approved",
        "steps": _obj(waiting[-1].data)["steps"],
    }
    assert rest[-1].type == "stop" and _obj(rest[-1].data)["reason"] == "completed"
    assert again.status_code == 409  # the run is over: nothing is waiting


async def test_edits_and_feedback_over_http(server: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=server.base_url, timeout=60) as client:
        run_id = await start_research(client, clarify=False, review_plan=True)
        first = await read_events(client, run_id, until_type="plan_review")
        revise = await client.post(f"/api/runs/{run_id}/plan", json={"feedback": "Focus on __slots__"})
        second = await read_events(client, run_id, last_event_id=first[-1].seq, until_type="plan_review")
        edit = await client.post(f"/api/runs/{run_id}/plan", json={"steps": ["Only this step"]})
        rest = await read_events(client, run_id, last_event_id=second[-1].seq)
        report_id = next(_obj(e.data)["report_id"] for e in rest if e.type == "report")
        report = (await client.get(f"/api/reports/{report_id}")).json()
    assert revise.status_code == 200 and edit.status_code == 200
    assert _obj(second[0].data)["outcome"] == "revising"
    assert _obj(second[-1].data)["round"] == 2
    assert _obj(rest[0].data) == {"type": "plan_reviewed", "outcome": "edited", "steps": ["Only this step"]}
    assert report["plan"] == ["Only this step"]


async def test_a_reload_while_waiting_replays_the_open_review(server: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=server.base_url, timeout=60) as client:
        run_id = await start_research(client, clarify=False, review_plan=True)
        await read_events(client, run_id, until_type="plan_review")
    # a new browser: the replay ends at the open review and the run is still waiting for it
    async with httpx.AsyncClient(base_url=server.base_url, timeout=60) as fresh:
        replay = await read_events(fresh, run_id, until_type="plan_review")
        accepted = await fresh.post(f"/api/runs/{run_id}/plan", json={"approve": True})
        rest = await read_events(fresh, run_id, last_event_id=replay[-1].seq)
    assert replay[0].seq == 0 and replay[-1].type == "plan_review"
    assert accepted.status_code == 200
    assert rest[-1].type == "stop" and _obj(rest[-1].data)["reason"] == "completed"


async def test_cancel_while_waiting_ends_the_run(server: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=server.base_url, timeout=60) as client:
        run_id = await start_research(client, clarify=False, review_plan=True)
        await read_events(client, run_id, until_type="plan_review")
        cancelled = await client.post(f"/api/runs/{run_id}/cancel")
        events = await read_events(client, run_id)
        run = (await client.get(f"/api/runs/{run_id}")).json()
        late = await client.post(f"/api/runs/{run_id}/plan", json={"approve": True})
    # The answer's own `status` is whatever the run reached within the server's cancel wait (a
    # loaded machine can outlast it; test_cancel.py checks it with a wait as long as the client's):
    # the run's end is read from its stream and its record instead.
    assert cancelled.status_code == 200 and cancelled.json()["cancelled"] is True
    assert run["status"] == "cancelled" and run["stop_reason"] == "cancelled"
    assert events[-1].type == "stop" and _obj(events[-1].data)["reason"] == "cancelled"
    assert late.status_code == 409


async def test_bad_answers_are_refused_with_a_reason(server: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=server.base_url, timeout=60) as client:
        unknown = await client.post("/api/runs/r_nope/plan", json={"approve": True})
        run_id = await start_research(client, clarify=False)  # no review asked for
        not_waiting = await client.post(f"/api/runs/{run_id}/plan", json={"approve": True})
        two = await client.post(f"/api/runs/{run_id}/plan", json={"approve": True, "feedback": "x"})
        empty = await client.post(f"/api/runs/{run_id}/plan", json={"steps": [" ", ""]})
        await read_events(client, run_id)
    assert unknown.status_code == 404
    assert not_waiting.status_code == 409 and "not waiting" in not_waiting.json()["detail"]
    assert two.status_code == 422 and "exactly one" in two.text
    assert empty.status_code == 422 and "body.steps.0: must contain visible text" in empty.text

"""The schedules API on a real server with the scripted model: create, list, read, edit, pause,
delete; bad timings refused with 422 and a clear message; run now as an ordinary run in the
schedule's session; the server's own scheduler firing a due schedule."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import httpx
import pytest

from conftest import LiveServer, live_server, read_events
from sleuth_testkit.engine import scripted_settings
from sleuth_testkit.model import ScriptedLLM

QUESTION = "How do Python descriptors work?"


@pytest.fixture
def ticking(llm: ScriptedLLM) -> Iterator[LiveServer]:
    """A server whose scheduler looks for due schedules often and fires them without a spread."""
    with live_server(scripted_settings(llm, schedule_tick_s=0.05, schedule_jitter_s=0)) as live:
        yield live


async def test_create_read_edit_pause_and_delete(server: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=server.base_url, timeout=30) as client:
        created = await client.post(
            "/api/schedules",
            json={
                "question": QUESTION,
                "cron": "0 7 * * 1-5",
                "timezone": "Europe/Berlin",
                "webhook_url": "https://hooks.example.com/sleuth",
            },
        )
        body = created.json()
        listed = (await client.get("/api/schedules")).json()
        one = (await client.get(f"/api/schedules/{body['id']}")).json()
        session = (await client.get(f"/api/sessions/{body['session_id']}")).json()
        edited = await client.patch(f"/api/schedules/{body['id']}", json={"every": "6h", "cron": None})
        paused = await client.patch(f"/api/schedules/{body['id']}", json={"paused": True})
        bad_edit = await client.patch(f"/api/schedules/{body['id']}", json={"timezone": "Mars/Olympus"})
        deleted = await client.delete(f"/api/schedules/{body['id']}")
        gone = await client.get(f"/api/schedules/{body['id']}")
        again = await client.delete(f"/api/schedules/{body['id']}")
    assert created.status_code == 201, created.text
    assert body["notify"] == "on_change" and body["next_due_at"].endswith("+00:00")
    assert body["next_due_at"][11:16] in ("05:00", "06:00")  # 07:00 in Berlin, summer or winter
    assert len(body["webhook_secret"]) >= 24 and body["webhook_secret_set"] is True  # shown once
    assert [s["id"] for s in listed] == [body["id"]] and "webhook_secret" not in listed[0]
    assert "webhook_secret" not in one and one["firings"] == []
    assert session["title"] == QUESTION and session["runs"] == []
    assert edited.status_code == 200 and edited.json()["every_s"] == 6 * 3600 and edited.json()["cron"] is None
    assert paused.json()["paused"] is True
    assert bad_edit.status_code == 422 and "Mars/Olympus" in bad_edit.json()["detail"]
    assert deleted.status_code == 204 and gone.status_code == 404 and again.status_code == 404


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ({"cron": "0 7 * *"}, "cron: '0 7 * *' is not a cron expression"),
        ({"cron": "0 7 * * *", "timezone": "Europe/Nowhere"}, "timezone: 'Europe/Nowhere' is not an IANA time zone"),
        ({"every": "often"}, "every: 'often' is not a duration"),
        ({"every": "5s"}, "shorter than the shortest interval"),
        ({"every": "6h", "cron": "0 7 * * *"}, "either cron"),
        ({}, "either cron"),
        ({"every": "6h", "webhook_url": "http://127.0.0.1:8080/hook"}, "webhook_url: refused: 127.0.0.1 is a loopback"),
        ({"every": "6h", "webhook_url": "ftp://example.com/x"}, "webhook_url: refused: scheme 'ftp'"),
    ],
)
async def test_a_schedule_that_cannot_be_kept_is_refused_with_422_saying_why(
    shared_server: LiveServer, body: dict[str, str], says: str
) -> None:
    async with httpx.AsyncClient(base_url=shared_server.base_url, timeout=30) as client:
        response = await client.post("/api/schedules", json={"question": QUESTION, **body})
        listed = (await client.get("/api/schedules")).json()
    assert response.status_code == 422
    assert says in response.json()["detail"]
    assert listed == []


async def test_run_now_is_an_ordinary_run_in_the_schedules_session(shared_server: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=shared_server.base_url, timeout=60) as client:
        created = (await client.post("/api/schedules", json={"question": QUESTION, "every": "1h"})).json()
        started = await client.post(f"/api/schedules/{created['id']}/run")
        assert started.status_code == 202, started.text
        run_id = started.json()["run_id"]
        events = await read_events(client, run_id)
        detail = (await client.get(f"/api/schedules/{created['id']}")).json()
        session = (await client.get(f"/api/sessions/{created['session_id']}")).json()
        missing = await client.post("/api/schedules/sch_nope/run")
        await client.delete(f"/api/schedules/{created['id']}")
    assert events[0].type == "run_start" and events[-1].type == "stop"
    assert [r["id"] for r in session["runs"]] == [run_id]
    assert [(f["status"], f["run_id"], f["detail"]) for f in detail["firings"]] == [("fired", run_id, "run now")]
    assert missing.status_code == 404


async def test_the_servers_scheduler_fires_a_due_schedule_once(ticking: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=ticking.base_url, timeout=60) as client:
        created = (await client.post("/api/schedules", json={"question": QUESTION, "every": "1h"})).json()
        # Make it due now, as if the hour had passed.
        ticking.database.execute(
            "UPDATE schedules SET next_due_at = ? WHERE id = ?", ("2000-01-01T00:00:00.000+00:00", created["id"])
        )
        async with asyncio.timeout(30):
            while not (firings := (await client.get(f"/api/schedules/{created['id']}")).json()["firings"]):
                await asyncio.sleep(0.05)  # the scheduler runs in the server: only its effect is observable
        events = await read_events(client, firings[0]["run_id"])
        after = (await client.get(f"/api/schedules/{created['id']}")).json()
    assert [f["status"] for f in after["firings"]] == ["fired"]
    assert firings[0]["due_at"].startswith("2000-01-01T00:00")
    assert after["next_due_at"] > "2026"  # the grid moved past now: the missed hours fire once
    assert events[-1].type == "stop"


async def test_each_firing_says_how_its_run_ended_and_what_it_found_changed(shared_server: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=shared_server.base_url, timeout=60) as client:
        created = (await client.post("/api/schedules", json={"question": QUESTION, "every": "1h"})).json()
        runs = []
        for _ in range(2):
            started = (await client.post(f"/api/schedules/{created['id']}/run")).json()
            await read_events(client, started["run_id"])
            runs.append(started["run_id"])
        detail = (await client.get(f"/api/schedules/{created['id']}")).json()
        listed = (await client.get("/api/schedules")).json()
        session = (await client.get(f"/api/sessions/{created['session_id']}")).json()
        second_report = (await client.get(f"/api/reports/{session['runs'][1]['report_id']}")).json()
        await client.delete(f"/api/schedules/{created['id']}")
    latest, first = detail["firings"]
    assert (first["run_id"], first["run_status"], first["changes"]) == (runs[0], "completed", None)  # nothing before it
    assert first["report_id"] == session["runs"][0]["report_id"]
    assert (latest["run_id"], latest["run_status"]) == (runs[1], "completed")
    assert latest["report_id"] == second_report["report_id"]
    expected = second_report["changes"]
    assert latest["changes"] == {k: expected[k] for k in ("changed", "since", "counts")}
    assert [s["last_firing"] for s in listed if s["id"] == created["id"]] == [latest]

"""Labels a user names things with (session titles, plan steps, upload file names) and strict
request types, over HTTP against a real uvicorn.

One rule for every label (sleuth/core/text.py): control characters (NUL, BEL, ESC, DEL, C1) and
bidi overrides/isolates are stripped; a label with nothing visible left is refused with 422.
"""

from __future__ import annotations

import json

import httpx
import pytest

from conftest import LiveServer, read_events, start_research

HOSTILE = "\x00Quarterly\x07 \x1bnotes\x7f\x85\u202eedoc\u2066\u2069"  # NUL, BEL, ESC, DEL, NEL, bidi
CLEANED = "Quarterly notes edoc"
INVISIBLE = ["\u200b\u200c\u200d\ufeff", "\u2060 \u3164", "\x1b\x00\u202e", "  \t"]
NOT_VISIBLE = "must contain visible text"


@pytest.fixture
def server(shared_server: LiveServer) -> LiveServer:
    """Every test here reads only what it creates, so they share one server."""
    return shared_server


async def test_session_titles_are_cleaned_and_invisible_ones_refused(server: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=server.base_url, timeout=30) as client:
        created = await client.post("/api/sessions", json={"title": HOSTILE})
        sid = created.json()["id"]
        renamed = await client.patch(f"/api/sessions/{sid}", json={"title": "Renamed\x1b[2J \u202dtitle\x00"})
        refused = [await client.patch(f"/api/sessions/{sid}", json={"title": t}) for t in INVISIBLE]
        refused_new = await client.post("/api/sessions", json={"title": INVISIBLE[0]})
        untitled = await client.post("/api/sessions", json={"title": ""})
        stored = (await client.get(f"/api/sessions/{sid}")).json()["title"]
    assert created.status_code == 201 and created.json()["title"] == CLEANED
    assert renamed.status_code == 200 and renamed.json()["title"] == "Renamed[2J title"
    for response in [*refused, refused_new]:
        assert response.status_code == 422, response.text
        assert response.json()["message"].startswith(f"body.title: {NOT_VISIBLE}"), response.text
    assert stored == "Renamed[2J title"  # the refused renames changed nothing
    assert untitled.status_code == 201 and untitled.json()["title"] == ""


@pytest.mark.parametrize("body", [{"approve": "yes"}, {"approve": 1}, {"approve": "true"}])
async def test_plan_answers_must_have_the_stated_types(server: LiveServer, body: dict[str, object]) -> None:
    async with httpx.AsyncClient(base_url=server.base_url, timeout=30) as client:
        response = await client.post("/api/runs/r_nope/plan", json=body)
    # refused for its body before the run is looked up: a coerced "yes" would reach the 404
    assert response.status_code == 422, response.text
    assert response.json()["message"].startswith(f"body.{next(iter(body))}: "), response.text


async def test_edited_plan_steps_are_cleaned_and_invisible_ones_refused(server: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=server.base_url, timeout=60) as client:
        run_id = await start_research(client, clarify=False, review_plan=True)
        waiting = await read_events(client, run_id, until_type="plan_review")
        invisible = await client.post(f"/api/runs/{run_id}/plan", json={"steps": ["Keep this", INVISIBLE[0]]})
        edited = await client.post(f"/api/runs/{run_id}/plan", json={"steps": [HOSTILE, "Compare\x1b[0m both"]})
        rest = await read_events(client, run_id, last_event_id=waiting[-1].seq)
    assert invisible.status_code == 422, invisible.text
    assert invisible.json()["message"].startswith(f"body.steps.1: {NOT_VISIBLE}"), invisible.text
    assert edited.status_code == 200, edited.text
    reviewed = json.loads(rest[0].data)["obj"]
    assert reviewed == {"type": "plan_reviewed", "outcome": "edited", "steps": [CLEANED, "Compare[0m both"]}


def _multipart(*names: str) -> tuple[bytes, dict[str, str]]:
    """A multipart body with the file names written raw (httpx percent-encodes control characters)."""
    parts = [
        b'--b0undary\r\nContent-Disposition: form-data; name="files"; filename="'
        + name.encode()
        + b'"\r\nContent-Type: text/markdown\r\n\r\n# Notes\n\nAardvarks dig burrows.\r\n'
        for name in names
    ]
    return b"".join(parts) + b"--b0undary--\r\n", {"content-type": "multipart/form-data; boundary=b0undary"}


async def test_upload_file_names_are_cleaned_and_invisible_ones_refused(server: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=server.base_url, timeout=30) as client:
        body, headers = _multipart("\x07rep\x1bort\x7f \u202egnp.md")
        added = await client.post("/api/collections/labels/documents", content=body, headers=headers)
        refused = []
        for name in ("\u200b\u202e\u2066", "\x1b\x07"):
            body, headers = _multipart("fine.md", name)
            refused.append(await client.post("/api/collections/labels/documents", content=body, headers=headers))
        listed = (await client.get("/api/collections/labels/documents")).json()
    assert added.status_code == 201, added.text
    assert [d["path"] for d in added.json()["added"]] == ["report gnp.md"]
    for response in refused:
        assert response.status_code == 422, response.text
        assert response.json()["detail"].startswith("file name ") and NOT_VISIBLE in response.json()["detail"]
    assert [d["path"] for d in listed] == ["report gnp.md"]  # the refused uploads added nothing

"""Bad input and limits: 404, readable 422, 413, 409, 429 with Retry-After."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest

from conftest import LiveServer, live_server, read_events, start_research
from sleuth_testkit.engine import scripted_settings
from sleuth_testkit.model import ScriptedLLM


@pytest.fixture
def limited(hanging_llm: ScriptedLLM) -> Iterator[LiveServer]:
    with live_server(scripted_settings(hanging_llm, max_runs=1, max_message_chars=100)) as live:
        yield live


async def test_unknown_ids_are_404(limited: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=limited.base_url, timeout=10) as client:
        for method, path in [
            ("GET", "/api/sessions/s_nope"),
            ("POST", "/api/sessions/s_nope/messages"),
            ("GET", "/api/runs/r_nope"),
            ("GET", "/api/runs/r_nope/events"),
            ("POST", "/api/runs/r_nope/cancel"),
            ("GET", "/api/reports/rep_nope"),
            ("GET", "/api/reports/rep_nope.md"),
            ("GET", "/api/no/such/route"),
        ]:
            response = await client.request(method, path, json={"content": "hi"} if method == "POST" else None)
            assert response.status_code == 404, (method, path, response.text)
            assert "not found" in response.json()["detail"] or "no such" in response.json()["detail"]


async def test_invalid_bodies_are_422_with_readable_messages(limited: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=limited.base_url, timeout=10) as client:
        sid = (await client.post("/api/sessions", json={})).json()["id"]
        cases = [
            ("/api/research", {}, "body.question: Field required"),
            ("/api/research", {"question": ""}, "body.question: must not be empty"),
            ("/api/research", {"question": "   \n"}, "body.question: must not be empty"),
            ("/api/research", {"question": "ok", "mode": "medium"}, "body.mode"),
            ("/api/research", {"question": 5}, "body.question: Input should be a valid string"),
            (f"/api/sessions/{sid}/messages", {"content": ""}, "body.content: must not be empty"),
            (f"/api/sessions/{sid}/messages", {"content": "x", "clarify": "perhaps"}, "body.clarify"),
            (f"/api/sessions/{sid}/messages", [], "body: Input should be a valid dictionary"),
        ]
        for path, body, expected in cases:
            response = await client.post(path, json=body)
            assert response.status_code == 422, (body, response.text)
            assert expected in response.json()["message"], response.json()
        broken = await client.post("/api/research", content=b"{not json", headers={"content-type": "application/json"})
        assert broken.status_code == 422 and "JSON" in broken.json()["message"]
        bad_resume = await client.get("/api/runs/r_x/events", headers={"Last-Event-ID": "abc"})
        assert bad_resume.status_code == 422


async def test_too_long_messages_are_413(limited: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=limited.base_url, timeout=10) as client:
        sid = (await client.post("/api/sessions", json={})).json()["id"]
        too_long = "x" * 101
        for path, key in ((f"/api/sessions/{sid}/messages", "content"), ("/api/research", "question")):
            response = await client.post(path, json={key: too_long})
            # the CLI refuses with the same words (tests/integration/test_cli_research.py)
            assert response.status_code == 413 and response.json() == {
                "detail": "message is 101 characters; the limit is 100"
            }
        huge = await client.post(
            "/api/research",
            content=b'{"question": "' + b"x" * 1_000_000 + b'"}',
            headers={"content-type": "application/json"},
        )
        assert huge.status_code == 413
        assert (await client.get("/api/sessions")).json()[0]["id"] == sid  # nothing else was created


async def test_a_chunked_body_over_the_cap_is_413_without_content_length(limited: LiveServer) -> None:
    async def chunks() -> AsyncIterator[bytes]:  # 20 MB of an unfinished JSON string, no Content-Length
        yield b'{"question": "'
        for _ in range(320):
            yield b"x" * 65536

    async with httpx.AsyncClient(base_url=limited.base_url, timeout=30) as client:
        response = await client.post("/api/research", content=chunks(), headers={"content-type": "application/json"})
        sessions = (await client.get("/api/sessions")).json()
    assert "content-length" not in response.request.headers
    # Refused by the byte counter while reading: a server that read the body first would answer
    # 422 (the JSON never ends), or 413 for the question's length, after holding all 20 MB.
    assert response.status_code == 413 and response.json()["detail"] == "Content Too Large"
    assert sessions == []


async def test_a_chunked_100_mb_body_in_1_mb_chunks_is_413_with_the_json_error(limited: LiveServer) -> None:
    async def chunks() -> AsyncIterator[bytes]:
        yield b'{"question": "'
        for _ in range(100):
            yield b"x" * 1_048_576

    async with httpx.AsyncClient(base_url=limited.base_url, timeout=60) as client:
        response = await client.post("/api/research", content=chunks(), headers={"content-type": "application/json"})
        after = await client.get("/api/sessions")  # the connection and the server still serve
    assert "content-length" not in response.request.headers
    assert response.status_code == 413 and response.headers["content-type"] == "application/json"
    assert response.json() == {"detail": "Content Too Large"}
    assert after.status_code == 200 and after.json() == []


async def test_an_oversized_content_length_is_413_with_the_json_error_where_no_body_is_read(
    limited: LiveServer,
) -> None:
    async with httpx.AsyncClient(base_url=limited.base_url, timeout=30) as client:
        # a route that reads no body, and one that does not exist: both refused for the declared size
        responses = [await client.post(path, content=b"x" * 200_000) for path in ("/api/runs/r_x/cancel", "/api/nope")]
    for response in responses:
        assert response.status_code == 413, response.text
        assert response.json() == {"detail": "Content Too Large"}


@pytest.mark.parametrize(
    ("path", "field"),
    [("/api/research", "question"), ("/api/sessions/{sid}/messages", "content"), ("/api/sessions", "title")],
)
async def test_a_lone_surrogate_is_a_422_not_a_500(limited: LiveServer, path: str, field: str) -> None:
    async with httpx.AsyncClient(base_url=limited.base_url, timeout=10) as client:
        sid = (await client.post("/api/sessions", json={})).json()["id"]
        body = f'{{"{field}": "descriptors \\ud800 lookup"}}'.encode()
        response = await client.post(path.format(sid=sid), content=body, headers={"content-type": "application/json"})
        runs = (await client.get(f"/api/sessions/{sid}")).json()["runs"]
    assert response.status_code == 422
    message = response.json()["message"]
    assert message.startswith(f"body.{field}: ") and ("surrogate" in message or "unicode" in message)
    assert runs == []


async def test_concurrent_run_limit_is_429_with_retry_after(limited: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=limited.base_url, timeout=30) as client:
        run_id = await start_research(client, clarify=False)
        sid = (await client.get(f"/api/runs/{run_id}")).json()["session_id"]
        sessions_before = len((await client.get("/api/sessions")).json())

        refused = await client.post("/api/research", json={"question": "another"})
        assert refused.status_code == 429 and int(refused.headers["Retry-After"]) > 0
        assert len((await client.get("/api/sessions")).json()) == sessions_before  # no empty session left behind
        other = (await client.post("/api/sessions", json={"title": "other"})).json()["id"]
        assert (await client.post(f"/api/sessions/{other}/messages", json={"content": "q"})).status_code == 429
        # the same session: its run is still going
        assert (await client.post(f"/api/sessions/{sid}/messages", json={"content": "q"})).status_code in (409, 429)
        assert (await client.get("/api/health")).json()["active_runs"] == 1

        await client.post(f"/api/runs/{run_id}/cancel")
        # The cancel answers after a bounded wait, which a loaded machine can outlast; the run's
        # slot is free once its stream ends (`stop` is shown only after the run is released).
        assert (await read_events(client, run_id))[-1].type == "stop"
        again = await client.post(f"/api/sessions/{other}/messages", json={"content": "q", "clarify": False})
        assert again.status_code == 202
        await client.post(f"/api/runs/{again.json()['run_id']}/cancel")


async def test_a_busy_session_refuses_a_second_message_with_409(hanging_server: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=hanging_server.base_url, timeout=30) as client:
        run_id = await start_research(client, clarify=False)
        sid = (await client.get(f"/api/runs/{run_id}")).json()["session_id"]
        busy = await client.post(f"/api/sessions/{sid}/messages", json={"content": "next"})
        assert busy.status_code == 409
        await client.post(f"/api/runs/{run_id}/cancel")
        events = await read_events(client, run_id)
        assert events[-1].type == "stop"


async def test_runs_refused_in_a_burst_leave_no_sessions(limited: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=limited.base_url, timeout=30) as client:
        burst = await asyncio.gather(
            *(client.post("/api/research", json={"question": f"q{i}", "clarify": False}) for i in range(24))
        )
        sessions = (await client.get("/api/sessions")).json()
        accepted = [r.json() for r in burst if r.status_code == 202]
        for run in accepted:
            await client.post(f"/api/runs/{run['run_id']}/cancel")
    assert sorted(r.status_code for r in burst) == [202] + [429] * 23
    assert [s["id"] for s in sessions] == [accepted[0]["session_id"]]

"""Optional bearer token: when set, every /api route but health needs it."""

from __future__ import annotations

import json

import httpx
import pytest

from conftest import LiveServer, live_server, read_events, start_research
from sleuth.config import Settings
from sleuth_testkit.engine import scripted_settings
from sleuth_testkit.model import ScriptedLLM

TOKEN = "s3cret-token-value"


async def test_token_required_on_every_api_route_but_health(llm: ScriptedLLM) -> None:
    with live_server(scripted_settings(llm, api_token=TOKEN)) as guarded:
        run_id, packets = await _exercise_guarded(guarded)
    # read after the server stopped: access lines are written when a response has fully ended
    log = (guarded.settings.data_dir / "logs" / "sleuth.jsonl").read_text()
    assert TOKEN not in log and "sk-test-secret" not in log
    lines = [json.loads(line) for line in log.splitlines()]
    assert any(line.get("query") == "access_token=%5Bredacted%5D" for line in lines)
    assert any(line["event"] == "run_finished" and line["run_id"] == run_id for line in lines)
    assert sum(1 for line in lines if line["event"] == "request" and line["status"] == 401) == 30


async def _exercise_guarded(guarded: LiveServer) -> tuple[str, int]:
    async with httpx.AsyncClient(base_url=guarded.base_url, timeout=60) as anon:
        assert (await anon.get("/api/health")).status_code == 200
        for method, path in [
            ("GET", "/api/sessions"),
            ("POST", "/api/sessions"),
            ("GET", "/api/sessions/s_x"),
            ("POST", "/api/sessions/s_x/messages"),
            ("POST", "/api/research"),
            ("GET", "/api/runs/r_x"),
            ("GET", "/api/runs/r_x/events"),
            ("POST", "/api/runs/r_x/cancel"),
            ("GET", "/api/reports/x"),
            ("GET", "/api/reports/x.md"),
        ]:
            for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}):
                response = await anon.request(method, path, headers=headers, json={"question": "q", "content": "q"})
                assert response.status_code == 401, (method, path, headers)
                assert response.headers["www-authenticate"] == "Bearer"

    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with httpx.AsyncClient(base_url=guarded.base_url, timeout=60, headers=headers) as client:
        run_id = await start_research(client, clarify=False)
        events = await read_events(client, run_id)
        assert events[-1].type == "stop"
    # EventSource cannot send headers: the token also works as ?access_token=
    async with httpx.AsyncClient(base_url=guarded.base_url, timeout=60) as anon:
        replay = await anon.get(f"/api/runs/{run_id}/events", params={"access_token": TOKEN})
        assert replay.status_code == 200 and replay.text.count("event: packet") == len(events)
    return run_id, len(events)


async def test_no_token_configured_means_open_api(server: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=server.base_url, timeout=10) as client:
        assert (await client.get("/api/sessions")).status_code == 200
        assert (await client.get("/api/sessions", headers={"Authorization": "Bearer anything"})).status_code == 200


def test_limits_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLEUTH_API_TOKEN", TOKEN)
    monkeypatch.setenv("SLEUTH_MAX_RUNS", "3")
    monkeypatch.setenv("SLEUTH_CORS_ORIGINS", "http://a.example, http://b.example")
    monkeypatch.setenv("SLEUTH_HEARTBEAT_S", "2.5")
    monkeypatch.setenv("SLEUTH_MAX_MESSAGE_CHARS", "1000")
    settings = Settings()
    assert settings.api_token is not None and settings.api_token.get_secret_value() == TOKEN
    assert TOKEN not in repr(settings)
    assert (settings.max_runs, settings.heartbeat_s) == (3, 2.5)
    assert settings.cors_origin_list == ["http://a.example", "http://b.example"]
    assert settings.max_body_bytes == 1000 * 4 + 4096
    monkeypatch.setenv("SLEUTH_API_TOKEN", "")
    monkeypatch.setenv("SLEUTH_CORS_ORIGINS", " , ")
    assert Settings().api_token is None
    assert Settings().cors_origin_list == []


async def test_cors_only_for_configured_origins(llm: ScriptedLLM) -> None:
    with live_server(scripted_settings(llm, cors_origins="http://ui.example")) as live:
        async with httpx.AsyncClient(base_url=live.base_url, timeout=10) as client:
            ok = await client.get("/api/sessions", headers={"Origin": "http://ui.example"})
            other = await client.get("/api/sessions", headers={"Origin": "http://evil.example"})
    assert ok.headers["access-control-allow-origin"] == "http://ui.example"
    assert "access-control-allow-origin" not in other.headers


async def test_no_cors_headers_by_default(server: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=server.base_url, timeout=10) as client:
        response = await client.get("/api/sessions", headers={"Origin": "http://ui.example"})
    assert "access-control-allow-origin" not in response.headers

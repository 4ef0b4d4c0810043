"""The API refuses research that the settings would make fail, before a session or run is stored."""

from __future__ import annotations

import json

import httpx
import pytest

from conftest import QUESTION, LiveServer, live_server, read_events
from sleuth_testkit.engine import scripted_settings
from sleuth_testkit.model import ScriptedLLM


def count(server: LiveServer, table: str) -> int:
    row = server.database.fetch_one(f"SELECT COUNT(*) AS n FROM {table}")
    return int(row["n"]) if row else 0


async def test_a_missing_corpus_is_a_400_and_nothing_is_stored(llm: ScriptedLLM) -> None:
    with live_server(scripted_settings(llm, corpus="/nonexistent")) as server:
        async with httpx.AsyncClient(base_url=server.base_url, timeout=10) as client:
            refused = await client.post("/api/research", json={"question": QUESTION})
            assert refused.status_code == 400
            assert "SLEUTH_CORPUS='/nonexistent'" in refused.json()["detail"]
            assert count(server, "sessions") == 0 and count(server, "runs") == 0

            session = (await client.post("/api/sessions", json={})).json()["id"]
            message = await client.post(f"/api/sessions/{session}/messages", json={"content": QUESTION})
            assert message.status_code == 400 and "SLEUTH_CORPUS" in message.json()["detail"]
            assert count(server, "runs") == 0 and count(server, "messages") == 0
    assert llm.requests == []


async def test_a_model_without_its_key_is_a_400_and_nothing_is_stored(
    llm: ScriptedLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The server checks the models once, in the background after it starts; requests reuse that answer.
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with live_server(scripted_settings(llm, api_key=None)) as server:
        async with httpx.AsyncClient(base_url=server.base_url, timeout=90) as client:
            for _ in range(2):
                refused = await client.post("/api/research", json={"question": QUESTION})
                assert refused.status_code == 400
                assert "needs OPENAI_API_KEY" in refused.json()["detail"]
            assert count(server, "sessions") == 0 and count(server, "runs") == 0
    assert llm.requests == []


async def test_time_budget_reaches_the_run_and_bad_budgets_are_422(server: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=server.base_url, timeout=90) as client:
        created = await client.post("/api/research", json={"question": QUESTION, "time_budget_s": 90, "clarify": False})
        assert created.status_code == 202, created.text
        events = await read_events(client, created.json()["run_id"], until_type="run_start")
        assert json.loads(events[-1].data)["obj"]["time_budget_s"] == 90

        session = (await client.post("/api/sessions", json={})).json()["id"]
        for body in ({"content": QUESTION, "time_budget_s": 1}, {"content": QUESTION, "time_budget_s": "soon"}):
            response = await client.post(f"/api/sessions/{session}/messages", json=body)
            assert response.status_code == 422 and "time_budget_s" in response.text
        too_long = await client.post("/api/research", json={"question": QUESTION, "time_budget_s": 10**6})
        assert too_long.status_code == 422

"""A run through the HTTP API with MCP servers configured: the engine (on its thread, with its own
event loop) starts the servers once, the report cites a tool's result, and a server that hangs at
start-up is a notice in the stream."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import httpx
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import TextContent

from conftest import live_server, read_events, start_research
from sleuth_testkit.engine import scripted_settings
from sleuth_testkit.model import Reply, ScriptedLLM
from support.mcp import McpModel, stdio_entry, write_servers


async def test_a_run_through_the_api_cites_an_mcp_result_and_shows_the_notice(tmp_path: Path) -> None:
    path = write_servers(
        tmp_path / "mcp.json",
        {"fixture": stdio_entry(), "stuck": stdio_entry("--hang", "--name", "stuck", init_timeout_s=1)},
    )
    with ScriptedLLM(McpModel()) as llm, live_server(scripted_settings(llm, mcp_config=path)) as server:
        async with httpx.AsyncClient(base_url=server.base_url, timeout=120) as client:
            packets = []
            for _ in range(2):  # the second run uses the servers the first one's engine started
                run_id = await start_research(client, "How do descriptors work?", clarify=False, mode="light")
                events = await read_events(client, run_id)
                packets.append([json.loads(event.data) for event in events])
            # The engine has said how its servers started (before its first run went on): the API
            # process, which starts none, lists them as the engine sees them.
            listed = (await client.get("/api/sources")).json()
    assert [s for s in listed if s["kind"] == "mcp"] == [
        {
            "name": "fixture",
            "kind": "mcp",
            "documents": None,
            "default": True,
            "tools": 7,
            "state": "ready",
            "reason": None,
            "visibility": None,
            "editable": None,
        },
        {
            "name": "stuck",
            "kind": "mcp",
            "documents": None,
            "default": True,
            "tools": None,
            "state": "unavailable",
            "reason": "did not start within 1 s",
            "visibility": None,
            "editable": None,
        },
    ]
    # stdio servers' stderr goes to one log under the data dir: the fixture was started once for
    # both runs, and closed by its owner when the server shut its engine down
    log = (server.settings.data_dir / "logs" / "mcp-servers.log").read_text(encoding="utf-8").splitlines()
    assert [line for line in log if line.startswith("fixture server fixture")] == [
        "fixture server fixture starting",
        "fixture server fixture stopped",
    ]
    for run in packets:
        assert run[-1]["obj"]["reason"] == "completed"
        report = next(p["obj"] for p in run if p["obj"]["type"] == "report")
        cited = [s for s in report["sources"] if s["url"].startswith("mcp://fixture/lookup_notes?args=")]
        assert len(cited) == 1 and f"[{cited[0]['number']}]" in report["markdown"]
        assert report["unsupported_claims"] == []
        notices = [p["obj"]["detail"] for p in run if p["obj"]["type"] == "degraded"]
        assert notices == ["MCP server stuck is unavailable: did not start within 1 s"]


async def test_an_mcp_result_opens_in_the_viewer_only_in_the_session_that_read_it(tmp_path: Path) -> None:
    path = write_servers(tmp_path / "mcp.json", {"fixture": stdio_entry()})
    with ScriptedLLM(McpModel()) as llm, live_server(scripted_settings(llm, mcp_config=path)) as server:
        async with httpx.AsyncClient(base_url=server.base_url, timeout=120) as client:
            run_id = await start_research(client, "How do descriptors work?", clarify=False, mode="light")
            # read to the end of the stream: the run's outcome (and what its tools returned) is stored by then
            run = [json.loads(event.data) for event in await read_events(client, run_id)]
            session_id = run[0]["obj"]["session_id"]
            report = next(p["obj"] for p in run if p["obj"]["type"] == "report")
            source = next(s for s in report["sources"] if s["url"].startswith("mcp://fixture/lookup_notes?args="))
            other = (await client.post("/api/sessions", json={})).json()["id"]
            by_url = await client.get("/api/documents", params={"url": source["url"], "session_id": session_id})
            by_id = await client.get(f"/api/documents/{source['id']}", params={"session_id": session_id})
            elsewhere = await client.get("/api/documents", params={"url": source["url"], "session_id": other})
            no_session = await client.get("/api/documents", params={"url": source["url"]})
        # Sleuth's own MCP server opens it too, for the report that cited it
        async with Client(streamable_http_client(f"{server.base_url}/mcp")) as sleuth_mcp:
            cited = await sleuth_mcp.call_tool("get_document", {"url": source["url"], "report_id": report["report_id"]})
            unsaid = await sleuth_mcp.call_tool("get_document", {"url": source["url"]})
    assert not cited.is_error and isinstance(cited.content[0], TextContent)
    assert "Fixture notes on descriptors: data descriptors define __get__" in cited.content[0].text
    assert unsaid.is_error
    assert by_url.status_code == 200, by_url.text
    opened = by_url.json()
    assert opened["url"] == source["url"] and opened["id"] == source["id"]
    assert opened["title"] == "fixture · lookup_notes: descriptors"
    assert opened["text"].startswith("Fixture notes on descriptors: data descriptors define __get__")
    assert by_id.json() == opened
    assert elsewhere.status_code == 404 and "no run of this session read it" in elsewhere.json()["detail"]
    assert no_session.status_code == 404 and "give session_id" in no_session.json()["detail"]


@dataclass
class HeldReport(McpModel):
    """The MCP model, its final report held until the test lets it go."""

    release: threading.Event = field(default_factory=threading.Event)

    def report(self, body: dict[str, Any]) -> Reply:
        return replace(super().report(body), gate=self.release)


async def test_an_mcp_result_opens_in_the_viewer_while_its_run_goes_on(tmp_path: Path) -> None:
    path = write_servers(tmp_path / "mcp.json", {"fixture": stdio_entry()})
    model = HeldReport()
    with ScriptedLLM(model) as llm, live_server(scripted_settings(llm, mcp_config=path)) as server:
        async with httpx.AsyncClient(base_url=server.base_url, timeout=120) as client:
            run_id = await start_research(client, "How do descriptors work?", clarify=False, mode="light")
            read = await read_events(client, run_id, until_type="message_start")  # the report is being written
            session_id = json.loads(read[0].data)["obj"]["session_id"]
            found = [
                doc
                for event in read
                if (obj := json.loads(event.data)["obj"])["type"] == "search_documents"
                for doc in obj["documents"]
                if doc["url"].startswith("mcp://fixture/lookup_notes?args=")
            ]
            during = await client.get("/api/documents", params={"url": found[0]["url"], "session_id": session_id})
            running = (await client.get(f"/api/runs/{run_id}")).json()["status"]
            model.release.set()
            await read_events(client, run_id)
            after = await client.get("/api/documents", params={"url": found[0]["url"], "session_id": session_id})
    assert running == "running"
    assert during.status_code == 200, during.text
    assert during.json()["text"].startswith("Fixture notes on descriptors: data descriptors define __get__")
    assert after.json() == during.json()  # kept once: the run's result stored the same document again

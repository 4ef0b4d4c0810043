"""A run through the HTTP API with MCP servers configured: the engine (on its thread, with its own
event loop) starts the servers once, the report cites a tool's result, and a server that hangs at
start-up is a notice in the stream."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from conftest import live_server, read_events, start_research
from sleuth_testkit.engine import scripted_settings
from sleuth_testkit.model import ScriptedLLM
from support.mcp import McpModel, stdio_entry, write_servers


async def test_a_run_through_the_api_cites_an_mcp_result_and_shows_the_notice(tmp_path: Path) -> None:
    path = write_servers(
        tmp_path / "mcp.json",
        {"fixture": stdio_entry(), "stuck": stdio_entry("--hang", "--name", "stuck", init_timeout_s=1)},
    )
    with ScriptedLLM(McpModel()) as llm, live_server(scripted_settings(llm, mcp_config=path)) as server:
        async with httpx.AsyncClient(base_url=server.base_url, timeout=120) as client:
            listed = (await client.get("/api/sources")).json()
            assert [s for s in listed if s["kind"] == "mcp"] == [
                {"name": "fixture", "kind": "mcp", "documents": None, "default": True},
                {"name": "stuck", "kind": "mcp", "documents": None, "default": True},
            ]
            packets = []
            for _ in range(2):  # the second run uses the servers the first one's engine started
                run_id = await start_research(client, "How do descriptors work?", clarify=False, mode="light")
                events = await read_events(client, run_id, until_type="stop")
                packets.append([json.loads(event.data) for event in events])
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

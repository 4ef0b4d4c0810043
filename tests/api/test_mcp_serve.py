"""Sleuth as an MCP server, driven by clients nobody here wrote: the official SDK's client against
`sleuth mcp serve` (stdio, a subprocess) and `/mcp` on a live server (streamable HTTP), and raw
newline-delimited JSON-RPC written to the stdio server's stdin, so a change in the SDK's protocol
cannot hide a break."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, cast

import httpx
import pytest
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import TextContent, TextResourceContents
from pydantic import SecretStr

from conftest import QUESTION, LiveServer, live_server, read_events
from sleuth.api.sse import run_rows
from sleuth.runs.channel import RunChannel
from sleuth.runs.service import RunService
from sleuth.store.store import Store
from sleuth.stream.documents import document_id
from sleuth_testkit.engine import scripted_settings
from sleuth_testkit.model import ScriptedLLM
from sleuth_testkit.scenarios import HangingOrchestrator, ResearchModel
from support.mcp import BACKEND
from support.scaleout import GatedOrchestrator

TOKEN = "mcp-test-token"
TOOLS = {"deep_research", "quick_search", "list_sources", "get_report", "get_document"}
RUN_ID = re.compile(r"Run (r_\w+) started")
HOST_TIMEOUT_S = 10  # long enough for a run to start on warm engines, however loaded the machine
WAIT_S = 120  # for a run on a loaded machine; the tests wait for events, this only bounds a hang


class Progress:
    """The progress lines a call received; `seen(prefix)` is awaited until one starts with it."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self._changed = asyncio.Event()

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        self.lines.append(message or "")
        self._changed.set()

    async def seen(self, prefix: str) -> str:
        async with asyncio.timeout(WAIT_S):
            while True:
                found = next((line for line in self.lines if line.startswith(prefix)), None)
                if found is not None:
                    return found
                self._changed.clear()
                await self._changed.wait()

    async def run_id(self) -> str:
        match = RUN_ID.match(await self.seen("Run "))
        assert match is not None
        return match.group(1)


def text_of(result: Any) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


def assert_is_the_report(text: str) -> str:
    """The verified report, as deep_research and get_report give it; its report id."""
    header, _, document = text.partition("\n\n")
    match = re.match(r"Report id: (rep_\w+) \(sleuth://reports/(rep_\w+)\)", header)
    assert match is not None and match.group(1) == match.group(2), header
    assert "\nTitle: " in header and re.search(r"\nConfidence: (high|medium|low) \(", header)
    assert document.startswith(f"# {QUESTION}")
    report, _, sources = document.partition("## Sources")
    assert "[1]" in report and sources.strip().startswith("1. [")
    return match.group(1)


# -- stdio -------------------------------------------------------------------------------------


def stdio_env(llm: ScriptedLLM, data_dir: Path) -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([BACKEND, os.environ.get("PYTHONPATH", "")]),
        "SLEUTH_MODEL": "openai/scripted",
        "SLEUTH_API_BASE": llm.base_url,
        "SLEUTH_API_KEY": "sk-test-secret",
        "SLEUTH_DATA_DIR": str(data_dir),
        "SLEUTH_HEARTBEAT_S": "0.5",
        "SLEUTH_CANCEL_WAIT_S": "30",
    }


@asynccontextmanager
async def stdio_client(llm: ScriptedLLM, data_dir: Path) -> AsyncIterator[Client]:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "sleuth", "mcp", "serve"], env=stdio_env(llm, data_dir), cwd=data_dir
    )
    async with Client(params) as client:
        yield client


class StoreOnly:
    """Runs of another process: their packets are read from the store they write."""

    async def open_channel(self, run_id: str) -> RunChannel | None:
        return None


async def stop_of(data_dir: Path, run_id: str) -> dict[str, Any]:
    """The `stop` packet of a run that `sleuth mcp serve` owns, once it has been written."""
    store = Store(data_dir)
    try:
        async with asyncio.timeout(WAIT_S):
            async for rows in run_rows(cast(RunService, StoreOnly()), store, run_id, after=-1, heartbeat_s=1):
                for row in rows:
                    if row.type == "stop":
                        return cast(dict[str, Any], json.loads(row.json)["obj"])
    finally:
        store.close()
    raise AssertionError(f"run {run_id} ended without a stop packet")


async def decision_of(data_dir: Path, run_id: str) -> dict[str, Any]:
    """What the server decided for a run whose call was cancelled (its `mcp_call_cancelled` log line)."""
    log = data_dir / "logs" / "sleuth.jsonl"
    async with asyncio.timeout(WAIT_S):
        while True:
            lines = log.read_text().splitlines() if log.exists() else []
            for line in map(json.loads, lines):
                if line["event"] == "mcp_call_cancelled" and line["run_id"] == run_id:
                    return cast(dict[str, Any], line)
            await asyncio.sleep(0.05)  # another process writes it


async def test_stdio_research_reports_progress_and_the_report_is_a_resource(llm: ScriptedLLM, tmp_path: Path) -> None:
    async with stdio_client(llm, tmp_path) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        progress = Progress()
        result = await client.call_tool(
            "deep_research", {"question": QUESTION, "mode": "light"}, progress_callback=progress
        )
        listed = (await client.list_resources()).resources
        read = await client.read_resource(listed[0].uri)
        searched = await client.call_tool("quick_search", {"query": "descriptor", "limit": 3})
        sources = await client.call_tool("list_sources", {})
    assert set(tools) == TOOLS and all(len(tool.description or "") > 80 for tool in tools.values())
    assert not result.is_error
    report_id = assert_is_the_report(text_of(result))
    lines = progress.lines
    assert RUN_ID.match(lines[0]) and lines[1].startswith("Researching: ") and lines[-1] == "Writing the report"
    assert any(line.startswith("Plan:\n1. ") for line in lines) and any(line.startswith("Started: ") for line in lines)
    assert [str(resource.uri) for resource in listed] == [f"sleuth://reports/{report_id}"]
    assert isinstance(read.contents[0], TextResourceContents) and read.contents[0].text == text_of(result)
    hits = text_of(searched).splitlines()
    assert hits[0].startswith("1. ") and hits[1].strip().startswith("corpus://") and hits[-3].startswith("3. ")
    assert text_of(sources).startswith("- python-reference (local, ")


async def test_stdio_cancel_cancels_the_run(tmp_path: Path) -> None:
    with ScriptedLLM(HangingOrchestrator()) as llm:
        async with stdio_client(llm, tmp_path) as client:
            progress = Progress()
            call = asyncio.create_task(
                client.call_tool("deep_research", {"question": QUESTION}, progress_callback=progress)
            )
            run_id = await progress.run_id()
            await progress.seen("Plan:")  # now it hangs in the orchestrator
            call.cancel()
            with pytest.raises(asyncio.CancelledError):
                await call
            stop = await stop_of(tmp_path, run_id)
            asked_after = await client.call_tool("get_report", {"report_id": run_id})
    decision = await decision_of(tmp_path, run_id)
    assert (decision["host_reason"], decision["run"]) == ("caller cancelled", "cancelled")
    assert stop["reason"] == "cancelled"
    assert asked_after.is_error and "without a report" in text_of(asked_after)


async def test_stdio_a_call_that_times_out_leaves_the_run_to_finish_for_get_report(tmp_path: Path) -> None:
    model = GatedOrchestrator()  # every run waits at its first orchestrator turn until the gate opens
    with ScriptedLLM(model) as llm:
        async with stdio_client(llm, tmp_path) as client:
            # A first call, with no timeout, waits for the engines to warm up and for its run to start.
            warm = Progress()
            first = asyncio.create_task(
                client.call_tool("deep_research", {"question": QUESTION}, progress_callback=warm)
            )
            await warm.run_id()
            progress = Progress()
            with pytest.raises(MCPError, match="timed out"):
                await client.call_tool(
                    "deep_research",
                    {"question": QUESTION, "mode": "light"},
                    read_timeout_seconds=HOST_TIMEOUT_S,
                    progress_callback=progress,
                )
            run_id = await progress.run_id()
            # The run is held until the server has decided, so a decision to cancel cannot be outrun.
            decision = await decision_of(tmp_path, run_id)
            assert (decision["host_reason"], decision["run"]) == (f"timed out after {HOST_TIMEOUT_S}s", "goes on")
            model.gate.set()
            stop = await stop_of(tmp_path, run_id)
            report = await client.call_tool("get_report", {"report_id": run_id})
            assert not (await first).is_error
    assert stop["reason"] == "completed"
    assert not report.is_error
    assert_is_the_report(text_of(report))


def test_mcp_list_and_doctor_do_not_load_the_server_that_serve_needs() -> None:
    code = (
        "import sys, sleuth.cli.mcp, sleuth.cli.doctor\n"
        "print(sorted(m for m in sys.modules if m.startswith(('sleuth.api', 'fastapi'))))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=WAIT_S)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_stdio_raw_json_rpc(llm: ScriptedLLM, tmp_path: Path) -> None:
    """initialize, the initialized notification, tools/list and tools/call, one JSON object per line."""
    server = subprocess.Popen(
        [sys.executable, "-m", "sleuth", "mcp", "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=stdio_env(llm, tmp_path),
        cwd=tmp_path,
        text=True,
    )
    assert server.stdin is not None and server.stdout is not None

    def send(message: dict[str, Any]) -> None:
        assert server.stdin is not None
        server.stdin.write(json.dumps(message) + "\n")
        server.stdin.flush()

    def receive() -> dict[str, Any]:
        assert server.stdout is not None
        line = server.stdout.readline()
        assert line, "the server closed stdout"
        return cast(dict[str, Any], json.loads(line))

    try:
        send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "raw-test", "version": "1"},
                },
            }
        )
        initialized = receive()
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        listed = receive()
        arguments = {"question": QUESTION, "mode": "light"}
        call = {"name": "deep_research", "arguments": arguments, "_meta": {"progressToken": "p1"}}
        send({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": call})
        notes: list[dict[str, Any]] = []
        while (message := receive()).get("id") != 3:
            notes.append(message)
        server.stdin.close()
        assert server.wait(WAIT_S) == 0
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    assert initialized["id"] == 1 and initialized["result"]["protocolVersion"] == "2025-06-18"
    assert initialized["result"]["serverInfo"]["name"] == "sleuth" and "tools" in initialized["result"]["capabilities"]
    assert {tool["name"] for tool in listed["result"]["tools"]} == TOOLS
    schema = next(t for t in listed["result"]["tools"] if t["name"] == "deep_research")["inputSchema"]
    assert schema["required"] == ["question"] and {"mode", "time_budget_s", "sources"} <= set(schema["properties"])
    assert notes and all(n["method"] == "notifications/progress" for n in notes)
    assert [n["params"]["progress"] for n in notes] == list(range(1, len(notes) + 1))
    assert {n["params"]["progressToken"] for n in notes} == {"p1"}
    assert notes[-1]["params"]["message"] == "Writing the report"
    result = message["result"]
    assert result["isError"] is False and [block["type"] for block in result["content"]] == ["text"]
    assert_is_the_report(result["content"][0]["text"])


# -- streamable HTTP on `sleuth serve` -----------------------------------------------------------


@pytest.fixture(scope="module")
def token_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with (
        ScriptedLLM(ResearchModel()) as scripted,
        live_server(
            scripted_settings(scripted, data_dir=tmp_path_factory.mktemp("mcp"), api_token=SecretStr(TOKEN))
        ) as live,
    ):
        yield live


@asynccontextmanager
async def http_client(server: LiveServer) -> AsyncIterator[Client]:
    async with (
        create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"}) as http,
        Client(streamable_http_client(f"{server.base_url}/mcp", http_client=http)) as client,
    ):
        yield client


async def test_http_mcp_needs_the_api_token(token_server: LiveServer) -> None:
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
    async with httpx.AsyncClient(base_url=token_server.base_url) as http:
        refused = await http.post("/mcp", json=initialize)
        wrong = await http.post("/mcp", json=initialize, headers={"Authorization": "Bearer nope"})
    assert refused.status_code == wrong.status_code == 401
    assert refused.json() == {"detail": "missing or invalid bearer token"}


async def test_http_research_reports_progress_and_the_newest_report_is_listed_first(
    token_server: LiveServer,
) -> None:
    async with http_client(token_server) as client:
        tools = {tool.name for tool in (await client.list_tools()).tools}
        progress = Progress()
        first = await client.call_tool("deep_research", {"question": QUESTION, "mode": "light"})
        second = await client.call_tool(
            "deep_research", {"question": QUESTION, "time_budget_s": 600}, progress_callback=progress
        )
        listed = (await client.list_resources()).resources
        read = await client.read_resource(listed[0].uri)
        searched = await client.call_tool("quick_search", {"query": "__getattr__", "sources": ["python-reference"]})
        unknown = await client.call_tool("quick_search", {"query": "x", "sources": ["nowhere"]})
    assert tools == TOOLS
    ids = [assert_is_the_report(text_of(first)), assert_is_the_report(text_of(second))]
    assert [str(resource.uri) for resource in listed][:2] == [f"sleuth://reports/{i}" for i in reversed(ids)]
    assert isinstance(read.contents[0], TextResourceContents) and read.contents[0].text == text_of(second)
    assert progress.lines[1].startswith("Researching: ") and progress.lines[-1] == "Writing the report"
    assert text_of(searched).startswith("1. ") and "corpus://python-reference/" in text_of(searched)
    assert unknown.is_error and "unknown source 'nowhere'" in text_of(unknown)


async def test_http_cancel_cancels_the_run(hanging_llm: ScriptedLLM, tmp_path: Path) -> None:
    with live_server(scripted_settings(hanging_llm, data_dir=tmp_path, cancel_wait_s=30)) as server:
        async with httpx.AsyncClient(base_url=server.base_url, timeout=WAIT_S) as http:
            async with Client(f"{server.base_url}/mcp") as client:
                progress = Progress()
                call = asyncio.create_task(
                    client.call_tool("deep_research", {"question": QUESTION}, progress_callback=progress)
                )
                run_id = await progress.run_id()
                await progress.seen("Plan:")  # now it hangs in the orchestrator
                watching = asyncio.create_task(read_events(http, run_id))
                call.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await call
                watched = await watching
            run = (await http.get(f"/api/runs/{run_id}")).json()
    assert watched[-1].type == "stop" and json.loads(watched[-1].data)["obj"]["reason"] == "cancelled"
    assert run["status"] == "cancelled"
    # Over HTTP without a session the host cancels by closing the response: no reason can come.
    assert (await decision_of(tmp_path, run_id))["host_reason"] == ""


async def test_http_a_host_on_a_session_is_heard_when_it_says_its_call_timed_out(
    hanging_llm: ScriptedLLM, tmp_path: Path
) -> None:
    """The session-based protocol (2025-06-18), raw: there the cancellation is a notification of its
    own, posted on the session, and its reason decides the run's fate."""
    legacy = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18"}
    with live_server(scripted_settings(hanging_llm, data_dir=tmp_path, cancel_wait_s=30)) as server:
        async with httpx.AsyncClient(base_url=server.base_url, timeout=WAIT_S, headers=legacy) as http:
            hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}
            opened = await http.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello})
            assert opened.status_code == 200, opened.text
            session = {"Mcp-Session-Id": opened.headers["mcp-session-id"]}
            done = await http.post(
                "/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session
            )
            assert done.status_code == 202

            async def run_started(request_id: int) -> str:
                call = {"name": "deep_research", "arguments": {"question": QUESTION}, "_meta": {"progressToken": "p"}}
                message = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": call}
                async with http.stream("POST", "/mcp", json=message, headers=session) as streamed:
                    async for line in streamed.aiter_lines():
                        said = json.loads(line[len("data:") :]) if line.startswith("data:") else {}
                        found = RUN_ID.match(said.get("params", {}).get("message", ""))
                        if found:
                            return found.group(1)
                raise AssertionError("the call ended before its run started")

            async def cancel(request_id: int, reason: str) -> None:
                params = {"requestId": request_id, "reason": reason}
                posted = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params}
                assert (await http.post("/mcp", json=posted, headers=session)).status_code == 202

            timed_out = await run_started(2)
            await cancel(2, "Request timed out")
            stopped = await run_started(3)
            await cancel(3, "the user pressed stop")
            decisions = [await decision_of(tmp_path, run_id) for run_id in (timed_out, stopped)]
            watched = await read_events(http, stopped)
            going_on = (await http.get(f"/api/runs/{timed_out}")).json()
    assert [(d["host_reason"], d["run"]) for d in decisions] == [
        ("Request timed out", "goes on"),
        ("the user pressed stop", "cancelled"),
    ]
    assert watched[-1].type == "stop" and json.loads(watched[-1].data)["obj"]["reason"] == "cancelled"
    assert going_on["status"] == "running"


async def test_http_documents_open_as_the_viewer_shows_them_and_bad_asks_are_error_results(
    token_server: LiveServer,
) -> None:
    url = "corpus://python-reference/attribute-access"
    async with http_client(token_server) as client:
        by_url = await client.call_tool("get_document", {"url": url})
        by_id = await client.call_tool("get_document", {"id": document_id(url)})
        both = await client.call_tool("get_document", {"id": document_id(url), "url": url})
        private = await client.call_tool("get_document", {"url": "http://127.0.0.1:9/private"})
        missing = await client.call_tool("get_report", {"report_id": "rep_nothing"})
        bad_mode = await client.call_tool("deep_research", {"question": QUESTION, "mode": "extreme"})
    assert not by_url.is_error and text_of(by_url) == text_of(by_id)
    title, _, rest = text_of(by_url).partition("\n\n")
    assert title == "# Customizing attribute access" and rest.startswith(f"URL: {url}\nCollection: python-reference")
    assert "descriptor" in rest
    assert both.is_error and "exactly one of `id` and `url`" in text_of(both)
    assert private.is_error and text_of(private).endswith("refused: 127.0.0.1 is a loopback address")  # SSRF guard
    assert missing.is_error and "no report or run 'rep_nothing'" in text_of(missing)
    assert bad_mode.is_error and "mode" in text_of(bad_mode)

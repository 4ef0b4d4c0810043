"""The fixture MCP server as a stdio subprocess and over streamable HTTP on a loopback port: tools
listed and called, a call timeout, a start-up that hangs, a server killed mid-run, and the SSRF
guard in front of HTTP servers."""

from __future__ import annotations

import asyncio
import re
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from sleuth.config import Settings
from sleuth.tools.base import ToolError
from sleuth.tools.mcp.client import ConnectionLost
from sleuth.tools.mcp.config import ServerConfig
from sleuth.tools.mcp.hub import McpHub, ServerState, states_from_json, states_json
from sleuth.tools.web.ssrf import AllowList, SsrfGuard
from sleuth_testkit.clock import ManualClock
from support.mcp import BACKEND, stdio_server, write_servers

FIXTURE_TOOLS = ["lookup_notes", "readme", "huge", "stall", "crash", "odd", "search"]


async def stalled_call(hub: McpHub, clock: ManualClock, server: str, timeout_s: float) -> None:
    """A call of the fixture's `stall` fails at its timeout on `clock`, not before."""
    stalled = asyncio.ensure_future(hub.call(server, "stall", {}))
    await clock.advance(timeout_s - 0.1)
    assert not stalled.done()
    await clock.advance(0.1)
    with pytest.raises(ToolError, match=rf"no answer within {timeout_s:g} s"):
        await stalled


async def test_a_stdio_server_lists_and_answers_and_a_slow_tool_times_out() -> None:
    clock = ManualClock()  # no deadline fires while the subprocess really starts and answers
    hub = McpHub([stdio_server(call_timeout_s=120, exclude=frozenset({"crash"}))], clock=clock)
    try:
        await asyncio.wait_for(hub.started(), 60)
        (status,) = hub.statuses
        assert (status.state, status.listed) == ("ready", len(FIXTURE_TOOLS))
        assert [t.name for t in hub.tools()] == [f"fixture__{n}" for n in FIXTURE_TOOLS if n != "crash"]
        output = await hub.call("fixture", "lookup_notes", {"topic": "slots"})
        assert output.texts[0].startswith("Fixture notes on slots:")
        readme = await hub.call("fixture", "readme", {})
        assert [r.uri for r in readme.resources] == ["notes://fixture/readme"]
        assert readme.links == [("notes://fixture/changelog", "changelog")]
        await stalled_call(hub, clock, "fixture", 120)
        # the server is still there after a timeout
        assert (await hub.call("fixture", "search", {"query": "q"})).texts == ["fixture search for q"]
    finally:
        await asyncio.wait_for(hub.close(), 30)


async def test_a_stdio_server_hanging_at_start_up_is_unavailable_after_its_timeout() -> None:
    clock = ManualClock()
    hub = McpHub([stdio_server("stuck", "--hang", init_timeout_s=30), stdio_server(init_timeout_s=60)], clock=clock)
    hub.start()
    try:
        await asyncio.wait_for(clock.sleeping(2), 60)  # both start-ups are under way, each bounded
        await clock.advance(29.9)
        assert hub.statuses[0].state == "starting"
        await clock.advance(0.1)
        await asyncio.wait_for(hub.started(), 60)  # the fixture server has come up meanwhile
        assert [(s.name, s.state, s.reason) for s in hub.statuses] == [
            ("stuck", "unavailable", "did not start within 30 s"),
            ("fixture", "ready", ""),
        ]
        with pytest.raises(ToolError, match="MCP server stuck is unavailable: did not start within 30 s"):
            await hub.call("stuck", "lookup_notes", {"topic": "x"})
    finally:
        await asyncio.wait_for(hub.close(), 30)


async def test_a_server_killed_mid_run_is_a_failed_call_then_unavailable() -> None:
    hub = McpHub([stdio_server("dying", "--exit-after-calls", "1")], clock=ManualClock())
    said: list[tuple[ServerState, ...]] = []
    hub.watch(said.append)  # what an engine tells its server: once started, then when one is lost
    try:
        await asyncio.wait_for(hub.started(), 60)
        assert said == [(ServerState("dying", "ready", "", len(FIXTURE_TOOLS)),)]
        await hub.call("dying", "lookup_notes", {"topic": "x"})
        with pytest.raises(ConnectionLost, match="the connection was lost"):
            await asyncio.wait_for(hub.call("dying", "lookup_notes", {"topic": "y"}), 30)
        assert hub.statuses[0].state == "unavailable" and hub.tools() == []
        assert [states[0].state for states in said] == ["ready", "unavailable"]
        assert said[1][0].reason.startswith("the connection was lost") and said[1][0].tools == 0
        assert states_from_json(states_json(said[1])) == said[1]
    finally:
        await asyncio.wait_for(hub.close(), 30)


async def test_a_command_that_does_not_exist_is_unavailable_with_the_reason() -> None:
    hub = McpHub([ServerConfig(name="ghost", transport="stdio", command="/no/such/cmd")])
    await asyncio.wait_for(hub.started(), 60)
    assert hub.statuses[0].state == "unavailable" and hub.statuses[0].reason.startswith("could not start: ")
    await hub.close()


@pytest.fixture
async def http_server() -> AsyncIterator[int]:
    """The fixture server over streamable HTTP on 127.0.0.1, on the port uvicorn says it is listening on
    (port 0: no other test can take it between a look and the bind)."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "sleuth_testkit.mcp_server",
        "--http",
        "0",
        "--allow-host",
        "fixture.invalid",
        env={"PYTHONPATH": BACKEND, "PATH": "/usr/bin:/bin"},
        stderr=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.DEVNULL,
    )
    assert process.stderr is not None
    try:

        async def listening() -> int:
            assert process.stderr is not None
            while line := await process.stderr.readline():
                if found := re.search(rb"Uvicorn running on http://127\.0\.0\.1:(\d+)", line):
                    return int(found.group(1))
            raise AssertionError("the fixture HTTP server exited before listening")

        yield await asyncio.wait_for(listening(), 60)
    finally:
        process.kill()
        await process.wait()


async def test_a_streamable_http_server_behind_the_ssrf_guard(http_server: int, tmp_path: Path) -> None:
    path = write_servers(
        tmp_path / "mcp.json",
        {"web": {"url": f"http://127.0.0.1:{http_server}/mcp", "headers": {"X-Token": "t"}, "call_timeout_s": 60}},
    )
    refused = McpHub.from_settings(Settings(data_dir=tmp_path, mcp_config=path))
    await asyncio.wait_for(refused.started(), 60)
    assert refused.statuses[0].state == "unavailable"
    assert refused.statuses[0].reason == "could not start: refused: 127.0.0.1 is a loopback address"
    await refused.close()

    clock = ManualClock()
    allowed = McpHub.from_settings(Settings(data_dir=tmp_path, mcp_config=path, mcp_allow_hosts="127.0.0.1"), clock)
    try:
        await asyncio.wait_for(allowed.started(), 60)
        assert allowed.statuses[0].state == "ready"
        assert [t.name for t in allowed.tools()] == [f"web__{n}" for n in FIXTURE_TOOLS]
        output = await allowed.call("web", "lookup_notes", {"topic": "http"})
        assert output.texts[0].startswith("Fixture notes on http:")
        await stalled_call(allowed, clock, "web", 60)
    finally:
        await asyncio.wait_for(allowed.close(), 30)


async def test_an_http_server_is_reached_at_the_address_its_name_was_vetted_at(http_server: int) -> None:
    looked_up: list[str] = []

    async def resolver(host: str, port: int) -> list[str]:
        # The name answers with the fixture's address once; a second lookup would be a rebinding.
        looked_up.append(host)
        return ["127.0.0.1"] if len(looked_up) == 1 else ["203.0.113.7"]

    # `.invalid` never resolves outside this guard: a connection not pinned to the vetted address fails
    server = ServerConfig(name="web", transport="http", url=f"http://fixture.invalid:{http_server}/mcp")
    guard = SsrfGuard(AllowList.parse("fixture.invalid"), resolver=resolver)
    hub = McpHub([server], guard=guard, clock=ManualClock())
    try:
        await asyncio.wait_for(hub.started(), 60)
        assert (hub.statuses[0].state, hub.statuses[0].reason) == ("ready", "")
        for topic in ("pinning", "rebinding"):
            output = await hub.call("web", "lookup_notes", {"topic": topic})
            assert output.texts[0].startswith(f"Fixture notes on {topic}:")
        assert looked_up == ["fixture.invalid"]  # checked once; every request went where the check said
    finally:
        await asyncio.wait_for(hub.close(), 30)

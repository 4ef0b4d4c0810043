"""MCP tools in a research run (the fixture server in memory): agents see them under prefixed
names, a result is a source the report cites and the claim check verifies, a failing or slow tool
is an answer the agent reads, and a server that cannot start is a notice, never a hang."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from sleuth.config import Settings
from sleuth.core.clock import Clock
from sleuth.stream.results import ResearchRequest
from sleuth.tools.local.access import BUILT_IN as EVERY_COLLECTION
from sleuth.tools.mcp.hub import McpHub, install_hub
from sleuth.tools.sources import check_sources, list_sources, select
from sleuth_testkit.clock import VirtualClock
from sleuth_testkit.engine import run_engine, scripted_settings
from sleuth_testkit.model import ScriptedLLM, tool_names
from sleuth_testkit.scenarios import last_tool_texts
from support.mcp import McpModel, memory_server, write_servers

QUESTION = "How do Python descriptors and __getattr__ interact?"
BUILT_IN = {"search", "open_url", "generate_report"}


@pytest.fixture
async def clock() -> AsyncIterator[VirtualClock]:
    """The servers run in memory, on the test's loop: time passes only when nothing but time can
    move the run on, so the default timeouts (minutes) fire at once and exactly."""
    async with VirtualClock() as virtual:
        yield virtual


@pytest.fixture
async def llm(clock: VirtualClock) -> AsyncIterator[ScriptedLLM]:
    model = McpModel(
        calls=[
            ("fixture__lookup_notes", {"topic": "descriptors"}),
            ("fixture__stall", {}),
            ("fixture__crash", {}),
        ]
    )
    async with ScriptedLLM(model, pauses=clock) as scripted:
        yield scripted


async def _hub(*servers: object, clock: Clock | None = None) -> AsyncIterator[McpHub]:
    hub = McpHub(list(servers), clock=clock)  # type: ignore[arg-type]
    install_hub(hub)
    try:
        yield hub
    finally:
        await hub.close()


@pytest.fixture
async def hub(clock: VirtualClock) -> AsyncIterator[McpHub]:
    async for made in _hub(memory_server(exclude=frozenset({"huge"})), clock=clock):
        yield made


def agent_requests(llm: ScriptedLLM) -> list[dict]:  # type: ignore[type-arg]
    return [body for body in llm.requests if "generate_report" in tool_names(body) and "search" in tool_names(body)]


async def test_a_tool_result_is_cited_and_verified_and_failures_are_read(
    llm: ScriptedLLM, hub: McpHub, clock: VirtualClock
) -> None:
    run = await run_engine(scripted_settings(llm), QUESTION, clock=clock)
    assert run.stop_reason == "completed"
    first = agent_requests(llm)[0]
    mcp_names = tool_names(first) - BUILT_IN - {"think_tool"}
    # prefixed: the fixture's own `search` is no clash with the built-in; `huge` is excluded
    assert mcp_names == {
        "fixture__lookup_notes",
        "fixture__readme",
        "fixture__stall",
        "fixture__crash",
        "fixture__odd",
        "fixture__search",
    }
    # a schema that is not JSON Schema is offered as an open object, so no argument check can break on it
    odd = next(t["function"] for t in first["tools"] if t["function"]["name"] == "fixture__odd")
    assert odd["parameters"] == {"type": "object", "properties": {}}
    assert odd["description"] == "[MCP server fixture] A tool whose input schema is not valid JSON Schema."
    cited = [s for s in run.result.sources if s.url.startswith("mcp://fixture/lookup_notes?args=")]
    assert len(cited) == 1 and cited[0].source == "mcp:fixture"
    assert cited[0].title == "fixture · lookup_notes: descriptors"
    marker = f"[{cited[0].number}]"
    verdicts = [c for c in run.result.claims if c.marker == marker]
    assert verdicts and all(c.supported for c in verdicts), verdicts
    # what the agent read back: the result numbered like a page, the timeout and the crash as failures
    answers = last_tool_texts(agent_requests(llm)[1])
    assert answers[0].startswith("[1] fixture · lookup_notes: descriptors\nURL: mcp://fixture/lookup_notes?args=")
    assert "data descriptors define __get__" in answers[0]
    assert answers[1].startswith("The tool fixture__stall failed:") and "no answer within 120 s" in answers[1]
    assert answers[2].startswith("The tool fixture__crash failed: the tool reported an error")
    errors = [p.obj.message for p in run.of("error")]  # type: ignore[union-attr]
    assert any(m.startswith("MCP tool fixture__stall failed") for m in errors), errors
    # the stalled call took its whole `call_timeout_s` of run time (the default), and no more
    called = next(p.seq for p in run.of("search_start") if p.obj.provider == "mcp:fixture")  # type: ignore[union-attr]
    failed = next(p.seq for p in run.of("error") if p.obj.message.startswith("MCP tool fixture__stall"))  # type: ignore[union-attr]
    assert run.times[failed] - run.times[called] == pytest.approx(120)
    assert all(p.obj.recoverable for p in run.of("error"))  # type: ignore[union-attr]
    searched = [p.obj.provider for p in run.of("search_start")]  # type: ignore[union-attr]
    assert searched.count("mcp:fixture") == 3


async def test_a_server_that_hangs_at_start_up_is_a_notice_and_the_run_goes_on(
    llm: ScriptedLLM, clock: VirtualClock
) -> None:
    async for hub in _hub(memory_server(), memory_server("stuck", hang=True), clock=clock):
        run = await asyncio.wait_for(run_engine(scripted_settings(llm), QUESTION, clock=clock), 60)
        assert run.stop_reason == "completed"
        notices = [p for p in run.of("degraded") if p.obj.level == "tool_unavailable"]  # type: ignore[union-attr]
        assert [n.obj.detail for n in notices] == ["MCP server stuck is unavailable: did not start within 30 s"]  # type: ignore[union-attr]
        assert run.times[notices[0].seq] == pytest.approx(30)  # the default `init_timeout_s`, on the run's clock
        assert not any(name.startswith("stuck__") for name in tool_names(agent_requests(llm)[0]))
        assert [s.state for s in hub.statuses] == ["ready", "unavailable"]


async def test_include_lists_the_only_tools_agents_see(llm: ScriptedLLM, clock: VirtualClock) -> None:
    async for _ in _hub(memory_server(include=frozenset({"lookup_notes", "readme"})), clock=clock):
        await run_engine(scripted_settings(llm), QUESTION, clock=clock)
    names = tool_names(agent_requests(llm)[0]) - BUILT_IN - {"think_tool"}
    assert names == {"fixture__lookup_notes", "fixture__readme"}


async def test_agents_see_at_most_the_configured_number_of_tools_chosen_by_their_task(
    llm: ScriptedLLM, clock: VirtualClock
) -> None:
    servers = [memory_server(f"s{i}") for i in range(3)]  # 21 tools
    async for _ in _hub(*servers, clock=clock):
        await run_engine(scripted_settings(llm, mcp_max_tools_per_agent=4), QUESTION, clock=clock)
    names = tool_names(agent_requests(llm)[0]) - BUILT_IN - {"think_tool"}
    # the task is "descriptor notes lookup": every server's lookup_notes first, then the best of the rest
    assert len(names) == 4
    assert {"s0__lookup_notes", "s1__lookup_notes", "s2__lookup_notes"} <= names


async def test_an_oversized_result_is_cut_where_the_server_says() -> None:
    with ScriptedLLM(McpModel(calls=[("fixture__huge", {})])) as llm:
        async for _ in _hub(memory_server(max_output_chars=500)):
            run = await run_engine(scripted_settings(llm), QUESTION)
        answer = last_tool_texts(agent_requests(llm)[1])[0]
    assert answer.startswith("[1] fixture · huge\nURL: mcp://fixture/huge?args=")
    assert answer.endswith("[cut at 500 characters]\n") or answer.rstrip().endswith("[cut at 500 characters]")
    assert len(answer) < 700
    assert run.stop_reason == "completed"


async def test_a_request_that_names_servers_gets_only_their_tools(
    llm: ScriptedLLM, clock: VirtualClock, tmp_path: Path
) -> None:
    path = write_servers(
        tmp_path / "mcp.json",
        {"fixture": {"command": "unused"}, "other": {"command": "unused"}, "off": {"command": "x", "enabled": False}},
    )
    settings = scripted_settings(llm, mcp_config=path)
    # the names the API and the CLI accept and list
    mcp = [(s.name, s.default) for s in list_sources(settings, viewer=EVERY_COLLECTION) if s.kind == "mcp"]
    assert mcp == [("fixture", True), ("other", True)]
    assert check_sources(settings, ["python-reference", "fixture"], viewer=EVERY_COLLECTION) == [
        "python-reference",
        "fixture",
    ]
    chosen = select(settings, ["fixture"])
    assert (chosen.mcp, chosen.collections, chosen.local) == (("fixture",), (), False)
    async for _ in _hub(memory_server(), memory_server("other"), clock=clock):
        run = await run_engine(settings, ResearchRequest(question=QUESTION, sources=["fixture"]), clock=clock)
    assert run.stop_reason == "completed"
    assert run.of("run_start")[0].obj.sources == ["fixture"]  # type: ignore[union-attr]
    names = tool_names(agent_requests(llm)[0]) - BUILT_IN - {"think_tool"}
    assert names and all(name.startswith("fixture__") for name in names)
    assert any(s.url.startswith("mcp://fixture/") for s in run.result.sources)


async def test_the_offline_model_calls_a_tool_that_fits_its_task_and_the_report_cites_it() -> None:
    # The default model, no scripted one: its agents call what fits their task (lookup_notes is
    # "about a Python topic, such as descriptors") and leave the rest (readme, huge, stall, ...) alone.
    async for _ in _hub(memory_server()):
        run = await asyncio.wait_for(run_engine(Settings(), QUESTION), 120)
    assert run.stop_reason == "completed"
    # an MCP call is shown as `<tool> <arguments as JSON>`
    queries = [q for p in run.of("search_queries") for q in p.obj.queries]  # type: ignore[union-attr]
    calls = [q for q in queries if re.match(r"^\w+ \{", q)]
    assert calls and all(call.startswith('lookup_notes {"topic": "') for call in calls), calls
    cited = [s for s in run.result.sources if s.url.startswith("mcp://fixture/lookup_notes?args=")]
    assert cited, [s.url for s in run.result.sources]
    kept = {d.url for d in run.result.tool_documents}
    assert {s.url for s in cited} <= kept

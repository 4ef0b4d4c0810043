"""A research agent: sees only its task, searches and reads, then writes a cited intermediate report."""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass, field
from typing import Any

from sleuth.core.clock import DeadlineReached, run_until
from sleuth.core.markdown import cited_numbers
from sleuth.llm.gateway import LLMError, ModelAccessError
from sleuth.llm.prompting import render
from sleuth.llm.tokens import count_tokens, truncate_tokens
from sleuth.llm.types import LLMResult, StreamHandlers, ToolCall
from sleuth.research import tool_schemas as ts
from sleuth.research.lanes.excerpts import focused_text
from sleuth.research.lanes.reasoning import Place, ReasoningRelay
from sleuth.research.modes import intermediate_report_tokens
from sleuth.research.sources import Numbering
from sleuth.research.state import RunState
from sleuth.research.step import OutputCap, llm_step
from sleuth.research.time.deadlines import seconds_until
from sleuth.stream.documents import Document, normalise_url
from sleuth.stream.packets import (
    Degraded,
    Error,
    IntermediateReportCitedDocs,
    IntermediateReportDelta,
    IntermediateReportStart,
    OpenUrlDocuments,
    OpenUrlStart,
    OpenUrlUrls,
    ResearchAgentStart,
    SearchDocuments,
    SearchQueries,
    SearchStart,
    SectionEnd,
)
from sleuth.stream.results import ToolDocument
from sleuth.tools.base import Page, ToolError
from sleuth.tools.mcp.hub import McpTool
from sleuth.tools.mcp.results import call_url, pick_tools, result_page
from sleuth.tools.toolbox import SearchOutcome


@dataclass
class AgentResult:
    task: str
    report: str
    citations: Numbering
    status: str = "done"  # done | failed | timed_out
    error: str | None = None


@dataclass
class Lane:
    """One agent's column in the timeline and the agent's private memory."""

    state: RunState
    turn: int
    tab: int
    task: str
    started_at: float
    citations: Numbering = field(default_factory=Numbering)
    page_text: dict[str, str] = field(default_factory=dict)  # document id -> text the agent read
    # What the run's earlier agents had read when this one started. Not what its siblings read
    # meanwhile: that depends on which of them is faster, and the same question would then be
    # researched differently from one run to the next.
    read_before: frozenset[str] = frozenset()
    asked: list[str] = field(default_factory=list)  # every search query, to focus long pages on them
    mcp_tools: dict[str, McpTool] = field(default_factory=dict)  # the MCP tools this agent was given, by name
    _sub: int = 0

    def next_sub(self) -> int:
        self._sub += 1
        return self._sub - 1

    def emit(self, obj: Any, sub: int | None = None) -> None:
        self.state.emit(obj, turn=self.turn, tab=self.tab, sub=sub)

    def open_block(self) -> Place:
        return (self.turn, self.tab, self.next_sub())


def _clean_strings(value: object, limit: int) -> list[str]:
    items = value if isinstance(value, list) else [value]
    out: list[str] = []
    for item in items:
        text = str(item).strip()
        if text and text not in out:
            out.append(text)
    return out[:limit]


async def _search(lane: Lane, call: ToolCall) -> str:
    state = lane.state
    sub = lane.next_sub()
    queries = _clean_strings((call.parsed or {}).get("queries"), ts.MAX_ITEMS_PER_CALL)
    lane.emit(SearchStart(provider=state.toolbox.provider_label), sub)
    lane.emit(SearchQueries(queries=queries), sub)
    limit = state.limits.search_results

    async def one(query: str) -> SearchOutcome:
        key = state.toolbox.provider_label + "\x00" + re.sub(r"\s+", " ", query.lower()).strip()
        return await state.query_cache.get(key, lambda: state.toolbox.search(query, limit=limit))

    lane.asked.extend(queries)
    outcomes = await asyncio.gather(*(one(q) for q in queries))
    documents: list[Document] = []
    errors: list[str] = []
    for outcome in outcomes:
        errors.extend(e for e in outcome.errors if e not in errors)
    # Rank by rank across the queries, so every query's best hit is near the top of the list.
    for rank in range(max((len(outcome.documents) for outcome in outcomes), default=0)):
        for outcome in outcomes:
            if rank < len(outcome.documents):
                found = outcome.documents[rank]
                known = state.registry.add(found)
                if all(d.id != known.id for d in documents):
                    # The snippet this search matched, not the one of whichever agent's search saw
                    # the page first: what an agent is shown must not depend on its siblings' timing.
                    documents.append(known.model_copy(update={"snippet": found.snippet}) if found.snippet else known)
    lane.emit(SearchDocuments(documents=documents), sub)
    for error in errors:
        lane.emit(Error(message=f"Search failed: {error}", recoverable=True), sub)
    numbered = [
        {
            "number": lane.citations.number(d),
            # an earlier agent of this run has read it: worth less to open again than an unread page
            "read_elsewhere": d.id in lane.read_before and d.id not in lane.page_text,
            **d.model_dump(),
        }
        for d in documents
    ]
    response = render("responses/search_results", documents=numbered, errors=errors)
    return response + ("\n\n" + render("agent_nudge") if documents else "")


def _read(lane: Lane, page: Page, asked: list[str]) -> tuple[Document, str]:
    """`page` as this agent reads it: registered with the run as fetched, focused on `asked` and
    capped at the page budget, its text kept for the claim check."""
    document = lane.state.registry.add(page.document, fetched=True)
    cap = lane.state.limits.page_max_tokens
    text = truncate_tokens(focused_text(page.text, asked, cap, count_tokens), cap)
    lane.page_text[document.id] = text
    return document, text


async def _open_url(lane: Lane, call: ToolCall) -> str:
    state = lane.state
    sub = lane.next_sub()
    urls = _clean_strings((call.parsed or {}).get("urls"), ts.MAX_ITEMS_PER_CALL)
    lane.emit(OpenUrlStart(), sub)
    lane.emit(OpenUrlUrls(urls=urls), sub)

    async def one(url: str) -> Page:
        return await state.url_cache.get(normalise_url(url), lambda: state.toolbox.read(url))

    results = await asyncio.gather(*(one(u) for u in urls), return_exceptions=True)
    pages: list[dict[str, Any]] = []
    documents: list[Document] = []
    errors: list[str] = []
    for url, result in zip(urls, results, strict=True):
        if isinstance(result, asyncio.CancelledError):
            raise result
        if isinstance(result, BaseException):
            state.tally.read_failed(normalise_url(url), result)
            errors.append(f"{url}: {result}" if isinstance(result, ToolError) else f"{url}: {type(result).__name__}")
            continue
        document, text = _read(lane, result, lane.asked or [lane.task])
        documents.append(document)
        pages.append(
            {"number": lane.citations.number(document), "title": document.title, "url": document.url, "text": text}
        )
    lane.emit(OpenUrlDocuments(documents=documents), sub)
    for error in errors:
        lane.emit(Error(message=f"Could not open {error}", recoverable=True), sub)
    return render("responses/open_url_results", pages=pages, errors=errors)


async def _call_mcp(lane: Lane, call: ToolCall, tool: McpTool) -> str:
    """One MCP tool call: its result becomes a document of the run, numbered and read like an
    opened page (the claim check finds its text where it finds pages'); a failure or timeout is an
    answer the agent reads, and the lane goes on."""
    state = lane.state
    hub = state.toolbox.mcp
    sub = lane.next_sub()
    arguments = call.parsed or {}
    lane.emit(SearchStart(provider=f"mcp:{tool.server}"), sub)
    lane.emit(SearchQueries(queries=[f"{tool.tool} {json.dumps(arguments, ensure_ascii=False)}"]), sub)

    async def compute() -> Page:
        if hub is None:
            raise ToolError("no MCP servers are connected")
        output = await hub.call(tool.server, tool.tool, arguments, tool.call_timeout_s)
        return result_page(tool, arguments, output)

    try:
        page = await state.url_cache.get(normalise_url(call_url(tool.server, tool.tool, arguments)), compute)
    except ToolError as exc:
        lane.emit(SearchDocuments(documents=[]), sub)
        lane.emit(Error(message=f"MCP tool {tool.name} failed: {exc}", recoverable=True), sub)
        return render("responses/mcp_result", error=str(exc), name=tool.name)

    async def same() -> Page:
        return page

    # A result that is a resource is known by the resource's URI too: the claim check looks it up there.
    await state.url_cache.get(normalise_url(page.document.url), same)
    document, text = _read(lane, page, [lane.task, *lane.asked])
    # The whole result, not the agent's focused cut: the viewer shows what the tool returned.
    kept = state.tool_documents[document.url] = ToolDocument(
        id=document.id, url=document.url, title=document.title, text=page.text
    )
    state.emitter.keep(kept)
    lane.emit(SearchDocuments(documents=[document]), sub)
    return render(
        "responses/mcp_result",
        error=None,
        number=lane.citations.number(document),
        title=document.title,
        url=document.url,
        text=text,
    )


async def _run_tools(lane: Lane, result: LLMResult) -> tuple[list[dict[str, Any]], bool]:
    """Execute one turn's tool calls concurrently; returns tool messages (in call order) and whether to report."""
    wants_report = False
    state = lane.state

    async def answer(call: ToolCall) -> str:
        nonlocal wants_report
        if not call.ok:
            return call.error or "Invalid tool call."
        if call.resolved_name == ts.SEARCH:
            return await _search(lane, call)
        if call.resolved_name == ts.OPEN_URL:
            return await _open_url(lane, call)
        if call.resolved_name == ts.THINK_TOOL:
            return render("responses/think_ack")
        if call.resolved_name == ts.GENERATE_REPORT:
            wants_report = True
            return render("responses/generate_report_ack")
        if call.resolved_name in lane.mcp_tools:
            return await _call_mcp(lane, call, lane.mcp_tools[call.resolved_name])
        return render(
            "responses/tool_unavailable",
            name=call.name,
            available=", ".join(
                [t["function"]["name"] for t in ts.agent_tools(not state.reasoning_model)] + list(lane.mcp_tools)
            ),
        )

    contents = await asyncio.gather(*(answer(call) for call in result.tool_calls))
    messages = [
        {"role": "tool", "tool_call_id": call.id, "content": content}
        for call, content in zip(result.tool_calls, contents, strict=True)
    ]
    return messages, wants_report


async def _research(lane: Lane, force_at: float) -> bool:
    """The search/read loop. Returns True when it was stopped by the force-report deadline."""
    state = lane.state
    with_think = not state.reasoning_model
    hub = state.toolbox.mcp
    if hub is not None:
        await hub.started()
        picked = pick_tools(state.toolbox.mcp_tools(), lane.task, state.settings.mcp_max_tools_per_agent)
        lane.mcp_tools = {tool.name: tool for tool in picked}
    tools = ts.agent_tools(with_think) + [tool.schema for tool in lane.mcp_tools.values()]
    names = [t["function"]["name"] for t in tools]
    messages: list[dict[str, Any]] = [
        {
            "role": "system",
            "content": render(
                "agent",
                today=state.today,
                think_tool=with_think,
                mcp_tools=bool(lane.mcp_tools),
                max_cycles=state.agent_max_cycles,
                max_items=ts.MAX_ITEMS_PER_CALL,
            ),
        },
        {"role": "user", "content": lane.task},
    ]

    async def turn(cycle: int) -> bool:
        messages.append(
            {
                "role": "user",
                "content": render(
                    "agent_turn",
                    cycle=cycle,
                    max_cycles=state.agent_max_cycles,
                    time_left_s=round(seconds_until(force_at, state.clock.now()), 1),
                ),
            }
        )
        relay = ReasoningRelay(state, names, lane.open_block)
        result = await llm_step(
            state,
            "researcher",
            messages,
            tools=tools,
            tool_choice="auto",
            handlers=relay.handlers(),
            turn=lane.turn,
            tab=lane.tab,
        )
        relay.finish()
        if not result.tool_calls:
            return True
        tool_messages, wants_report = await _run_tools(lane, result)
        messages.append(result.assistant_message())
        messages.extend(tool_messages)
        return wants_report

    first_until = state.deadlines.agent_first_turn_until(lane.started_at)
    for cycle in range(1, state.agent_max_cycles + 1):
        until = first_until if cycle == 1 else force_at
        if state.clock.now() >= until:
            return True
        try:
            if await run_until(state.clock, until, turn(cycle)):
                return False
        except DeadlineReached:
            return True
    return False


async def _write_report(lane: Lane, forced: bool) -> str:
    state = lane.state
    cap = intermediate_report_tokens(state.settings, state.mode)
    sub = lane.next_sub()
    lane.emit(IntermediateReportStart(content=""), sub)
    sources = [
        {"number": n, "title": d.title, "url": d.url, "text": lane.page_text.get(d.id) or d.snippet}
        for n, d in sorted(lane.citations.by_number.items())
    ]
    messages = [
        {
            "role": "system",
            "content": render("intermediate_report", today=state.today, task=lane.task, max_tokens=cap, forced=forced),
        },
        {"role": "user", "content": render("intermediate_report_user", sources=sources, forced=forced)},
    ]
    output = OutputCap("intermediate report", cap, lambda delta: lane.emit(IntermediateReportDelta(content=delta), sub))
    result = await llm_step(
        state,
        "researcher",
        messages,
        max_tokens=cap,
        handlers=StreamHandlers(on_text=output.on_text),
        turn=lane.turn,
        tab=lane.tab,
    )
    report = output.keep(result.content.strip(), result.finish_reason)
    if output.cut:
        lane.emit(output.degraded(), sub)
    cited = [lane.citations.by_number[n] for n in dict.fromkeys(cited_numbers(report)) if n in lane.citations.by_number]
    lane.emit(IntermediateReportCitedDocs(documents=cited), sub)
    return report


async def run_agent(lane: Lane) -> AgentResult:
    """One agent from start to report. Isolated: it is given only `lane.task`."""
    state = lane.state
    lane.emit(ResearchAgentStart(task=lane.task))
    force_at = state.deadlines.agent_force_report_at(lane.started_at)
    forced = await _research(lane, force_at)
    if forced:
        lane.emit(
            Degraded(level="agent_force_report", detail="Time budget reached; writing the report from what was found.")
        )
    report = await _write_report(lane, forced)
    lane.emit(SectionEnd())
    return AgentResult(task=lane.task, report=report, citations=lane.citations)


async def run_lane(lane: Lane) -> AgentResult:
    """`run_agent`, with failure contained to its lane: an error packet and an empty result."""
    try:
        return await run_agent(lane)
    except (asyncio.CancelledError, ModelAccessError):
        raise
    except Exception as exc:
        message = str(exc) if isinstance(exc, (LLMError, ToolError)) else f"{type(exc).__name__}: {exc}"
        lane.emit(Error(message=f"Research agent failed: {message}", recoverable=True))
        lane.emit(SectionEnd())
        return AgentResult(task=lane.task, report="", citations=lane.citations, status="failed", error=message)

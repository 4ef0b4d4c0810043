"""The MCP server: Sleuth's tools and report resources, written with the SDK's `MCPServer`.

One server object per transport. Its lifespan yields the `Services` the tools use: `sleuth serve`
lends its own (`/mcp`), `sleuth mcp serve` opens them inside the stdio transport, so the engine
processes start with stdout already kept off the wire.

A research run belongs to the server, not to the call that started it. When the host cancels the
call, the run is cancelled with it, unless the host says the call timed out: then the run goes on,
and `get_report` returns the report once it is done.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import cache
from typing import Annotated, Any

from pydantic import Field

from sleuth.api.mcp import research
from sleuth.api.mcp.research import REPORT_URI, ResearchMode
from sleuth.api.refused import Refused
from sleuth.api.routes.health import VERSION
from sleuth.api.services import Services
from sleuth.config import MAX_TIME_BUDGET_S, MIN_TIME_BUDGET_S
from sleuth.core import heavy
from sleuth.core.logs import log_run_event

NAME = "sleuth"
INSTRUCTIONS = """Sleuth is a deep-research system over the user's local documents and the web.
For a question that needs several sources weighed and cited, call `deep_research` (minutes; it sends
progress). For a quick look-up, `quick_search`. `list_sources` names what can be searched; pass those
names as `sources`. Reports stay available: `get_report`, or the `sleuth://reports/{id}` resources."""

# The user whose MCP request is being answered over HTTP (`http.py` sets it; the SDK runs each
# message's handler in the context of the HTTP request that carried it). None: the built-in user
# (stdio, and servers without accounts), who sees everything.
CALLER: ContextVar[str | None] = ContextVar("mcp_caller", default=None)

# How many of the latest reports `resources/list` lists.
LISTED_REPORTS = 50
# How long a cancelled call waits for the host's reason. It comes in the notification that cancelled
# the call, so it is heard at once; none comes when a host on a session went away without a word.
REASON_WAIT_S = 10.0

QUESTION = Field(description="The research question, in full, as the user would ask it.")
MODE = Field(
    description="`light`: a quicker, narrower pass; `standard`: the default; `heavy`: broader and deeper, and slower."
)
TIME_BUDGET = Field(
    ge=MIN_TIME_BUDGET_S,
    le=MAX_TIME_BUDGET_S,
    description="Seconds the research may take; it finishes its report within them. Default: the server's.",
)
SOURCES = Field(description="Source names from `list_sources` to search; default: the server's default sources.")


def _channel(request: Any) -> str | None:
    """Where a request's cancellation reason can come from (a `ServerRequestContext`): the one host
    of a stdio server, or the HTTP session of a host on the session-based protocol. None over HTTP
    without a session (protocol 2026-07-28): the host cancels by closing the response, and a posted
    `notifications/cancelled` is dropped unread, so no reason ever comes."""
    http = request.request
    if http is None:
        return ""
    session_id: str | None = http.headers.get("mcp-session-id")
    return session_id


@dataclass
class CancelReasons:
    """Why the host cancelled each request (`notifications/cancelled` carries a reason). The SDK
    cancels the call first and hands over the notification after, so a cancelled call waits for it.

    Keyed by channel and request id: the SDK builds a new session object for every message."""

    _waiting: dict[tuple[str, str], asyncio.Future[str]] = field(default_factory=dict)

    def expect(self, request: Any) -> asyncio.Future[str]:
        future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        channel = _channel(request)
        if channel is None:
            future.set_result("")
        else:
            self._waiting[(channel, str(request.request_id))] = future
        return future

    def forget(self, request: Any) -> None:
        channel = _channel(request)
        if channel is not None:
            self._waiting.pop((channel, str(request.request_id)), None)

    def heard(self, request: Any) -> None:
        """`request`: the context of a `notifications/cancelled`."""
        channel, params = _channel(request), request.params
        if channel is None or not isinstance(params, Mapping):
            return
        future = self._waiting.get((channel, str(params.get("requestId"))))
        if future is not None and not future.done():
            future.set_result(str(params.get("reason") or ""))

    def close(self) -> None:
        """No reason can come any more (the server is stopping): each waiting call hears none."""
        for future in self._waiting.values():
            if not future.done():
                future.set_result("")

    @staticmethod
    async def given(heard: asyncio.Future[str]) -> str:
        """The reason, once it has come (at most `REASON_WAIT_S`); "" when none came."""
        try:
            return await asyncio.wait_for(asyncio.shield(heard), REASON_WAIT_S)
        except TimeoutError:
            return ""  # the host closed the call without a word: a cancellation

    async def middleware(self, ctx: Any, call_next: Callable[[Any], Awaitable[Any]]) -> Any:
        if ctx.method == "notifications/cancelled":
            self.heard(ctx)
        return await call_next(ctx)


def timed_out(reason: str) -> bool:
    # Both official SDKs send this reason when their own request timeout abandons a call
    # (Python: "timed out after Ns"; TypeScript: "Request timed out").
    return "timed out" in reason.lower()


class Answer:
    """The tools' plumbing: the services of the running server, refusals as error results."""

    def __init__(self) -> None:
        self.services: Services | None = None
        self.reasons = CancelReasons()
        self._later: set[asyncio.Task[None]] = set()

    def later(self, step: Coroutine[Any, Any, None]) -> None:
        """Run `step` after the call that asked has ended (held here until it is done)."""
        task = asyncio.create_task(step)
        self._later.add(task)
        task.add_done_callback(self._later.discard)

    async def settle(self) -> None:
        """Wait for what `later` runs (a run to cancel), before the services close."""
        self.reasons.close()
        if self._later:
            await asyncio.wait(list(self._later), timeout=REASON_WAIT_S)

    def current(self) -> Services:
        """The services as the caller sees them (their own sessions and reports only)."""
        if self.services is None:
            raise heavy.McpToolError("the server is starting; try again in a moment")
        return self.services.seen_by(CALLER.get())

    async def __call__(self, step: Callable[[Services], Awaitable[str]]) -> str:
        try:
            return await step(self.current())
        except Refused as exc:
            raise heavy.McpToolError(exc.detail) from None


@cache
def _server_class() -> type[heavy.MCPServer[None]]:
    class SleuthServer(heavy.MCPServer[None]):
        """Lists the latest reports as resources, newest first (the SDK lists only fixed ones)."""

        answer: Answer

        async def list_resources(self) -> list[heavy.McpResource]:
            listed = await super().list_resources()
            if self.answer.services is None:
                return listed
            services = self.answer.current()
            reports = await research.recent_reports(services, LISTED_REPORTS)
            return listed + [
                heavy.McpResource(
                    uri=research.report_uri(report_id), name=report_id, title=title, mime_type="text/markdown"
                )
                for report_id, title in reports
            ]

    return SleuthServer


def _own_logging(build: Callable[[], heavy.MCPServer[None]]) -> heavy.MCPServer[None]:
    """`build()`, with the root logger left as it was: the SDK's server configures it (a console
    handler at INFO), and Sleuth's logging is its own (`core/logs.py`)."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        return build()
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)


def build_server(open_services: Callable[[], AbstractAsyncContextManager[Services]]) -> heavy.MCPServer[None]:
    """The server; `open_services` is entered for as long as the server runs."""
    answer = Answer()

    @asynccontextmanager
    async def lifespan(_: object) -> AsyncIterator[None]:
        async with open_services() as services:
            answer.services = services
            try:
                yield None
            finally:
                await answer.settle()
                answer.services = None

    server = _own_logging(lambda: _server_class()(NAME, version=VERSION, instructions=INSTRUCTIONS, lifespan=lifespan))
    server.answer = answer  # type: ignore[attr-defined]  # the subclass declares it
    server.middleware.append(answer.reasons.middleware)

    @server.tool(
        structured_output=False,  # the text is the answer; a copy as JSON would double it
        description=(
            "Research a question in depth: plan, search the sources in parallel lanes, read, and write a "
            "report whose every citation was checked against its source. Takes minutes and reports progress. "
            "Returns the report as markdown with numbered sources, its title, confidence and report id. Use it "
            "for questions that need several sources weighed; for a quick fact, use quick_search."
        ),
    )
    async def deep_research(
        question: Annotated[str, QUESTION],
        ctx: heavy.McpContext,
        mode: Annotated[ResearchMode, MODE] = "standard",
        time_budget_s: Annotated[float | None, TIME_BUDGET] = None,
        sources: Annotated[list[str] | None, SOURCES] = None,
    ) -> str:
        progress = [0]
        request = ctx.request_context
        heard = answer.reasons.expect(request)

        async def say(line: str) -> None:
            progress[0] += 1
            await ctx.report_progress(progress[0], None, line)

        async def decide(run_id: str) -> None:
            reason = await answer.reasons.given(heard)
            goes_on = timed_out(reason)
            log_run_event(
                "mcp_call_cancelled", run_id, host_reason=reason[:200], run="goes on" if goes_on else "cancelled"
            )
            if not goes_on:
                await research.cancel_run(answer.current(), run_id)

        async def expire() -> None:
            await answer.reasons.given(heard)
            answer.reasons.forget(request)

        def when_cancelled(run_id: str) -> None:
            answer.later(decide(run_id))

        try:
            report = await answer(
                lambda services: research.deep_research(
                    services,
                    question,
                    mode=mode,
                    time_budget_s=time_budget_s,
                    chosen=sources,
                    say=say,
                    when_cancelled=when_cancelled,
                )
            )
        except asyncio.CancelledError:
            answer.later(expire())  # the reason follows the cancellation: keep listening for it
            raise
        except BaseException:
            answer.reasons.forget(request)
            raise
        answer.reasons.forget(request)
        return report

    @server.tool(
        structured_output=False,  # the text is the answer; a copy as JSON would double it
        description=(
            "Search the sources once and return ranked results (title, URL, snippet), in seconds. Nothing is "
            "read or verified: use it to find pages or check what the sources hold; use deep_research for an answer."
        ),
    )
    async def quick_search(
        query: Annotated[str, Field(description="What to search for: keywords or a short question.")],
        sources: Annotated[list[str] | None, SOURCES] = None,
        limit: Annotated[int, Field(ge=1, le=50, description="How many results at most.")] = 10,
    ) -> str:
        return await answer(lambda services: research.quick_search(services, query, sources, limit))

    @server.tool(
        structured_output=False,  # the text is the answer; a copy as JSON would double it
        description=(
            "List the sources Sleuth can search: local document collections (with their document counts), "
            "web search providers and MCP servers, and which are searched by default. Pass their names as `sources`."
        ),
    )
    async def list_sources() -> str:
        return await answer(research.source_list)

    @server.tool(
        structured_output=False,  # the text is the answer; a copy as JSON would double it
        description=(
            "A report Sleuth wrote earlier, as markdown with its numbered sources, title and confidence. Takes the "
            "report id, or the run id deep_research gave first (for a call that ended before its report)."
        ),
    )
    async def get_report(
        report_id: Annotated[str, Field(description="The report id, or the run id of the research.")],
    ) -> str:
        return await answer(lambda services: research.report_text(services, report_id))

    @server.tool(
        structured_output=False,  # the text is the answer; a copy as JSON would double it
        description=(
            "Open a document a report cited or a search found, as plain text: by its document id, or by URL "
            "(corpus:// for a local document, http(s):// for a web page, fetched now, mcp:// for what a tool "
            "returned to a report's research: give that report's id too). Give exactly one of id and url."
        ),
    )
    async def get_document(
        id: Annotated[str | None, Field(description="The document id from a report's sources or a search.")] = None,
        url: Annotated[str | None, Field(description="The document's URL.", max_length=4096)] = None,
        report_id: Annotated[
            str | None, Field(description="The report that cited it: needed for an mcp:// source.")
        ] = None,
    ) -> str:
        return await answer(lambda services: research.document_text(services, id, url, report_id))

    @server.resource(
        REPORT_URI,
        name="report",
        title="A research report",
        description="A report Sleuth wrote, as markdown with its numbered sources.",
        mime_type="text/markdown",
    )
    async def report(report_id: str) -> str:
        try:
            return await research.report_text(answer.current(), report_id)
        except Refused as exc:
            raise heavy.ResourceNotFoundError(exc.detail) from None

    return server


async def serve_stdio(open_services: Callable[[], AbstractAsyncContextManager[Services]]) -> None:
    """Serve over this process's stdin and stdout until the host closes them."""
    await heavy.ready("mcp")
    await build_server(open_services).run_stdio_async()

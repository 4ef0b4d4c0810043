"""The one module that speaks the `mcp` SDK (2.x): connect to a configured server, list its tools,
call one. Everything else in Sleuth sees only the plain types below, so the SDK's next major
release is a change to this file.

The SDK is imported through `core/heavy.py`: it loads a web server stack of its own, which a run
without MCP servers never pays for.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from functools import cache
from typing import Any, TextIO

import httpx

from sleuth.core import heavy
from sleuth.tools.base import ToolError
from sleuth.tools.mcp.config import ServerConfig
from sleuth.tools.web.ssrf import SsrfGuard, VettedTarget, origin_of


@dataclass(frozen=True)
class ToolInfo:
    """A tool as the server lists it."""

    name: str
    description: str
    input_schema: dict[str, Any]


@dataclass(frozen=True)
class ResourceText:
    """An embedded resource: its own URI and its text."""

    uri: str
    text: str


@dataclass(frozen=True)
class ToolOutput:
    """What a call returned, as text: the text blocks, the embedded text resources, the resource links
    (uri, name), and whether the server flagged it as an error."""

    texts: list[str] = field(default_factory=list)
    resources: list[ResourceText] = field(default_factory=list)
    links: list[tuple[str, str]] = field(default_factory=list)
    is_error: bool = False
    skipped: int = 0  # blocks with no text (images, audio, binary resources)


class ConnectionLost(ToolError):
    """The server went away (its process died, its HTTP endpoint stopped answering)."""


class Connection:
    """A connected server, usable from any task of the event loop that connected it."""

    def __init__(self, client: heavy.McpClient) -> None:
        self._client = client

    async def list_tools(self) -> list[ToolInfo]:
        tools: list[ToolInfo] = []
        cursor: str | None = None
        for _ in range(100):  # a server that pages forever cannot hang the start-up
            listing = await self._client.list_tools(cursor=cursor)
            tools.extend(
                ToolInfo(name=t.name, description=t.description or "", input_schema=dict(t.input_schema or {}))
                for t in listing.tools
            )
            cursor = listing.next_cursor
            if not cursor:
                break
        return tools

    async def call(self, tool: str, arguments: dict[str, Any]) -> ToolOutput:
        """Call `tool`, with no time limit of its own: the caller bounds it on its clock (cancelling
        the call leaves the connection usable). Raises ToolError for a protocol error or a lost
        connection; a result the server marks as an error is returned (`is_error`), with its text."""
        try:
            result = await self._client.call_tool(tool, arguments)
        except heavy.MCPError as exc:
            if exc.code == heavy.CONNECTION_CLOSED:
                raise ConnectionLost(f"the connection was lost ({exc})") from None
            raise ToolError(str(exc) or type(exc).__name__) from None
        except Exception as exc:  # a closed stream, a dead process: the SDK's own types vary by transport
            raise ConnectionLost(f"the connection was lost ({type(exc).__name__}: {exc})") from None
        return _output(result)


def _output(result: heavy.CallToolResult) -> ToolOutput:
    texts: list[str] = []
    resources: list[ResourceText] = []
    links: list[tuple[str, str]] = []
    skipped = 0
    for block in result.content:
        if isinstance(block, heavy.TextContent):
            texts.append(block.text)
        elif isinstance(block, heavy.EmbeddedResource) and isinstance(block.resource, heavy.TextResourceContents):
            resources.append(ResourceText(uri=str(block.resource.uri), text=block.resource.text))
        elif isinstance(block, heavy.ResourceLink):
            links.append((str(block.uri), block.name))
        else:
            skipped += 1
    return ToolOutput(texts=texts, resources=resources, links=links, is_error=bool(result.is_error), skipped=skipped)


@cache
def _pinned_transport() -> Callable[[SsrfGuard, VettedTarget], heavy.Httpx2AsyncBaseTransport]:
    """The SDK's HTTP transport, pinned as web page fetches are (made on first use: the SDK's HTTP
    library loads with it)."""

    class PinnedTransport(heavy.Httpx2AsyncBaseTransport):
        """Sends each request to the address the SSRF guard vetted for its origin, the name kept in
        the Host header and TLS: a DNS answer that changes after the check (rebinding) cannot move
        the connection. An origin not seen yet (a redirect) is vetted first, then pinned too."""

        def __init__(self, guard: SsrfGuard, first: VettedTarget) -> None:
            self._guard = guard
            self._addresses = {first.origin: first.address}
            # trust_env=False: an environment proxy would connect on our behalf and defeat the pinning.
            self._inner = heavy.Httpx2AsyncHTTPTransport(trust_env=False)

        async def handle_async_request(self, request: heavy.Httpx2Request) -> heavy.Httpx2Response:
            url = httpx.URL(str(request.url))
            address = self._addresses.get(origin_of(url))
            if address is None:
                address = self._addresses[origin_of(url)] = (await self._guard.vet(url)).address
            target = VettedTarget(url, address)
            headers = request.headers.copy()
            headers["Host"] = target.host_header
            pinned = heavy.Httpx2Request(
                request.method,
                str(target.pinned_url),
                headers=headers,
                stream=request.stream,
                extensions={**request.extensions, **target.tls_extensions},
            )
            return await self._inner.handle_async_request(pinned)

        async def aclose(self) -> None:
            await self._inner.aclose()

    return PinnedTransport


@asynccontextmanager
async def connect(server: ServerConfig, errlog: TextIO, guard: SsrfGuard) -> AsyncIterator[Connection]:
    """Start (stdio) or reach (HTTP) `server` and hold the connection until the block ends.

    Enter and leave it in one task: the SDK's transports are task groups. A stdio server's stderr
    goes to `errlog`. An HTTP server's URL passes `guard` first (ToolError, SourceBlocked), and every
    request goes to the address it vetted."""
    async with AsyncExitStack() as stack:
        target: Any
        if server.transport == "memory":
            target = server.in_process
        elif server.transport == "stdio":
            params = heavy.StdioServerParameters(
                command=server.command, args=list(server.args), env=dict(server.env) or None, cwd=server.cwd
            )
            target = heavy.stdio_client(params, errlog=errlog)
        else:
            vetted = await guard.vet(server.url)
            http = await stack.enter_async_context(
                heavy.Httpx2AsyncClient(
                    headers=dict(server.headers),
                    timeout=heavy.Httpx2Timeout(heavy.MCP_DEFAULT_TIMEOUT, read=heavy.MCP_DEFAULT_SSE_READ_TIMEOUT),
                    transport=_pinned_transport()(guard, vetted),
                    trust_env=False,
                )
            )
            target = heavy.streamable_http_client(server.url, http_client=http)
        client = await stack.enter_async_context(heavy.McpClient(target, cache=None))
        yield Connection(client)

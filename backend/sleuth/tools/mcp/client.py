"""The one module that speaks the `mcp` SDK (2.x): connect to a configured server, list its tools,
call one. Everything else in Sleuth sees only the plain types below, so the SDK's next major
release is a change to this file.

The SDK is imported through `core/heavy.py`: it loads a web server stack of its own, which a run
without MCP servers never pays for.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, TextIO

from sleuth.core import heavy
from sleuth.tools.base import ToolError
from sleuth.tools.mcp.config import ServerConfig


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


@asynccontextmanager
async def connect(server: ServerConfig, errlog: TextIO) -> AsyncIterator[Connection]:
    """Start (stdio) or reach (HTTP) `server` and hold the connection until the block ends.

    Enter and leave it in one task: the SDK's transports are task groups. A stdio server's stderr
    goes to `errlog`."""
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
            http = await stack.enter_async_context(heavy.create_mcp_http_client(headers=dict(server.headers)))
            target = heavy.streamable_http_client(server.url, http_client=http)
        client = await stack.enter_async_context(heavy.McpClient(target, cache=None))
        yield Connection(client)

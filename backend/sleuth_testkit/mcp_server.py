"""A small MCP server for tests, written with the SDK: in memory (`fixture_server()`), as a stdio
subprocess (`python -m sleuth_testkit.mcp_server`), or over streamable HTTP on a loopback port
(`--http PORT`). No network beyond 127.0.0.1.

Its tools: `lookup_notes` (text a report can cite), `readme` (an embedded resource and a resource
link), `huge` (output longer than any sensible cap), `stall` (never answers: a call timeout),
`crash` (the server reports an error), `odd` (an input schema that is not JSON Schema), `search` (a
name a built-in tool has). `--hang` never
finishes starting (an init timeout); `--exit-after-calls N` exits after N calls (a server killed
mid-run); over HTTP, `--allow-host NAME` accepts that Host header (a name a test's guard resolves).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types import EmbeddedResource, ResourceLink, TextContent, TextResourceContents

NOTES = (
    "Fixture notes on {topic}: data descriptors define __get__ and __set__ and take precedence over "
    "the instance dictionary. __getattr__ runs only when normal attribute lookup fails."
)
README_URI = "notes://fixture/readme"
HUGE_CHARS = 50_000


def fixture_server(name: str = "fixture", *, hang: bool = False, exit_after_calls: int | None = None) -> MCPServer:
    """The fixture server. `hang`: its start-up never ends. `exit_after_calls`: the process exits
    after that many tool calls (meaningful only as a subprocess)."""

    @asynccontextmanager
    async def lifespan(_: MCPServer) -> AsyncIterator[None]:
        if hang:
            await anyio.Event().wait()
        yield None

    server: MCPServer = MCPServer(name, lifespan=lifespan if hang else None)
    calls = [0]

    def counted() -> None:
        calls[0] += 1
        if exit_after_calls is not None and calls[0] > exit_after_calls:
            os._exit(3)

    @server.tool(description="Look up the fixture notes about a Python topic, such as descriptors.")
    def lookup_notes(topic: str) -> str:
        counted()
        return NOTES.format(topic=topic)

    @server.tool(description="The fixture's readme, as an embedded resource, with a link to another.")
    def readme() -> list[EmbeddedResource | ResourceLink]:
        counted()
        return [
            EmbeddedResource(
                type="resource",
                resource=TextResourceContents(uri=README_URI, text="The fixture readme.", mime_type="text/plain"),
            ),
            ResourceLink(type="resource_link", uri="notes://fixture/changelog", name="changelog"),
        ]

    @server.tool(description="A very long text.")
    def huge() -> list[TextContent]:
        counted()
        return [TextContent(type="text", text="descriptor " * (HUGE_CHARS // 11))]

    @server.tool(description="Never answers.")
    async def stall() -> str:
        counted()
        await anyio.Event().wait()
        return "never"

    @server.tool(description="Always fails.")
    def crash() -> str:
        counted()
        raise ValueError("the fixture crashed on purpose")

    @server.tool(description="A tool whose input schema is not valid JSON Schema.")
    def odd(value: str = "") -> str:
        counted()
        return f"odd {value}"

    @server.tool(description="A tool whose name a built-in tool has too.")
    def search(query: str) -> str:
        counted()
        return f"fixture search for {query}"

    # A server may list any schema: this one is not JSON Schema at all.
    odd_tool = server._tool_manager.get_tool("odd")
    assert odd_tool is not None
    odd_tool.parameters = {"type": "object", "properties": {"value": {"type": "strng"}}}
    return server


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--name", default="fixture")
    parser.add_argument("--hang", action="store_true")
    parser.add_argument("--exit-after-calls", type=int, default=None)
    parser.add_argument("--http", type=int, default=None, metavar="PORT")
    parser.add_argument(
        "--allow-host", default=None, metavar="NAME", help="a Host header to accept besides the loopback names"
    )
    args = parser.parse_args(argv)
    server = fixture_server(args.name, hang=args.hang, exit_after_calls=args.exit_after_calls)
    print(f"fixture server {args.name} starting", file=sys.stderr, flush=True)  # tests count the starts
    if args.http is None:
        server.run("stdio")
    else:
        hosts = ["127.0.0.1", "localhost", *([args.allow_host] if args.allow_host else [])]
        security = TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=[f"{host}:*" for host in hosts],
            allowed_origins=[f"http://{host}:*" for host in hosts],
        )
        server.run("streamable-http", host="127.0.0.1", port=args.http, transport_security=security)
    print(f"fixture server {args.name} stopped", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])

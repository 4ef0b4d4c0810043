"""`sleuth mcp list` (the configured MCP servers, their state and tools) and `sleuth mcp call`
(one tool, to try it). `sleuth doctor` checks the servers with `server_checks`. `sleuth mcp serve`
(`mcp_serve.py`) is the other direction: Sleuth itself as an MCP server, over stdio."""

from __future__ import annotations

import asyncio
import json
import sys
from importlib import import_module

import click

from sleuth.cli.settings import cli_settings
from sleuth.config import Settings
from sleuth.research.preflight import Check
from sleuth.tools.base import ToolError
from sleuth.tools.mcp.config import config_path
from sleuth.tools.mcp.hub import McpHub
from sleuth.tools.mcp.results import output_text

NONE_CONFIGURED = "No MCP servers are configured (SLEUTH_MCP_CONFIG, or mcp.json in the data dir; see docs/mcp.md)."


async def _started(settings: Settings) -> McpHub:
    hub = McpHub.from_settings(settings)
    await hub.started()
    return hub


def server_checks(settings: Settings) -> list[Check]:
    """One line per configured server: it starts and lists its tools within its timeout, or why not."""

    async def check() -> list[Check]:
        hub = await _started(settings)
        try:
            if hub.problem:
                return [Check("mcp", False, hub.problem)]
            checks: list[Check] = []
            for status in hub.statuses:
                if status.state == "ready":
                    detail = f"{len(status.tools)} of {status.listed} tools offered ({status.config.transport})"
                    checks.append(Check(f"mcp {status.name}", True, detail))
                elif status.state == "disabled":
                    checks.append(Check(f"mcp {status.name}", True, f"disabled ({status.reason})"))
                else:
                    checks.append(Check(f"mcp {status.name}", False, status.reason))
            return checks or [Check("mcp", True, f"{config_path(settings)}: no servers")]
        finally:
            await hub.close()

    if config_path(settings) is None:
        return [Check("mcp", True, "no MCP servers configured")]
    return asyncio.run(check())


# `sleuth mcp serve`'s module, imported when it runs: it loads the API server and the engine, which
# `list`, `call` and `sleuth doctor` (which imports this module) do without.
SERVE_MODULE = "sleuth.cli.mcp_serve"


class McpCommands(click.Group):
    """`list` and `call` defined here; `serve` from its own module, imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted([*self.commands, "serve"])

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name == "serve":
            command = import_module(SERVE_MODULE).serve
            assert isinstance(command, click.Command)
            return command
        return super().get_command(ctx, cmd_name)


@click.group("mcp", cls=McpCommands)
def mcp() -> None:
    """List the configured MCP servers and their tools, call one tool to try it, or serve Sleuth over MCP."""


@mcp.command("list")
def list_servers() -> None:
    """Every configured MCP server: its state (started now, within its timeout) and the tools agents see."""

    settings = cli_settings()
    if config_path(settings) is None:
        click.echo(NONE_CONFIGURED)
        return

    async def inspect() -> McpHub:
        hub = await _started(settings)
        await hub.close()
        return hub

    hub = asyncio.run(inspect())
    if hub.problem:
        raise click.ClickException(hub.problem)
    tools = {tool.name: tool for tool in hub.tools_listed()}
    for status in hub.statuses:
        line = f"{status.name}  {status.state}  {status.config.transport}"
        if status.reason:
            line += f"  ({status.reason})"
        elif status.state == "ready":
            line += f"  {len(status.tools)} of {status.listed} tools"
        click.echo(line)
        for tool in tools.values():
            if tool.server == status.name:
                click.echo(f"  {tool.name}  {tool.summary[:100]}")
    if any(status.state == "unavailable" for status in hub.statuses):
        sys.exit(1)


@mcp.command("call")
@click.argument("server")
@click.argument("tool")
@click.option("--args", "arguments", default="{}", show_default=True, help="The tool's arguments, a JSON object.")
@click.option(
    "--timeout",
    "timeout_s",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="Seconds to wait for the answer; default: the server's call_timeout_s.",
)
def call(server: str, tool: str, arguments: str, timeout_s: float | None) -> None:
    """Call TOOL of SERVER once and print what it returned, as a run would read it."""

    settings = cli_settings()
    try:
        parsed = json.loads(arguments)
    except json.JSONDecodeError as exc:
        raise click.BadParameter(f"not valid JSON ({exc.msg})", param_hint="--args") from None
    if not isinstance(parsed, dict):
        raise click.BadParameter("must be a JSON object", param_hint="--args")
    if config_path(settings) is None:
        raise click.ClickException(NONE_CONFIGURED)

    async def once() -> tuple[str, bool]:
        hub = await _started(settings)
        try:
            if hub.problem:
                raise ToolError(hub.problem)
            output = await hub.call(server, tool, parsed, timeout_s)
            return output_text(output), output.is_error
        finally:
            await hub.close()

    try:
        text, is_error = asyncio.run(once())
    except ToolError as exc:
        raise click.ClickException(f"{server} {tool}: {exc}") from None
    click.echo(text)
    if is_error:
        sys.exit(1)

"""`sleuth mcp serve`: Sleuth itself as an MCP server, over stdio, for a desktop host (docs/mcp.md).

Its own module, so that `sleuth mcp list`, `call` and `sleuth doctor` do not load the server and the
engine it needs (`cli/mcp.py` imports it when the command runs)."""

from __future__ import annotations

import asyncio

import click

from sleuth.api.mcp.server import serve_stdio
from sleuth.api.services import open_services
from sleuth.cli.services import cli_check_redis
from sleuth.cli.settings import cli_check_database, cli_settings
from sleuth.core.logs import close_logging, setup_logging
from sleuth.research.run import run_research


@click.command("serve")
def serve() -> None:
    """Serve Sleuth's research tools over MCP on stdin and stdout, for a desktop host (docs/mcp.md).

    The host starts this command and talks to it; runs, reports and settings are those of
    `sleuth serve` with the same data dir. Log lines go to the data dir's log, never to stdout.
    """

    settings = cli_settings()
    cli_check_database(settings)
    cli_check_redis(settings)
    setup_logging(settings.data_dir)
    try:
        asyncio.run(serve_stdio(lambda: open_services(settings, run_research)))
    except KeyboardInterrupt:
        pass
    finally:
        close_logging(settings.data_dir)

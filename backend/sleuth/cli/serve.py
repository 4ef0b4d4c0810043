"""`sleuth serve`: the API and web UI under uvicorn."""

from __future__ import annotations

import click
import uvicorn

from sleuth.api.app import create_app
from sleuth.cli.services import cli_check_redis
from sleuth.cli.settings import cli_check_database, cli_settings


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to bind (0.0.0.0 in containers).")
@click.option("--port", default=8000, show_default=True, type=int)
@click.option(
    "--log-level",
    default="info",
    show_default=True,
    type=click.Choice(["critical", "error", "warning", "info", "debug"]),
)
def serve(host: str, port: int, log_level: str) -> None:
    """Run the Sleuth server (API at /api, docs at /docs, web UI at /)."""

    settings = cli_settings()
    cli_check_database(settings)
    cli_check_redis(settings)
    app = create_app(settings)
    # uvicorn's own access log is off; ours (JSON lines under the data dir) replaces it.
    uvicorn.run(app, host=host, port=port, log_level=log_level, access_log=False, timeout_graceful_shutdown=10)

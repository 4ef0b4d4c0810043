"""`sleuth serve`: the API and web UI under uvicorn.

The address is printed once the server can run research (`api/readiness.py`), not when the port
opens: until then the engines are warming up, and a user who opened the page at once would wait
for them without knowing why. `/api/health` answers meanwhile, with `ready: false`.
"""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Sequence

import click
import uvicorn
from fastapi import FastAPI

from sleuth.api.app import create_app
from sleuth.api.readiness import until_ready
from sleuth.cli.services import cli_check_redis
from sleuth.cli.settings import cli_check_database, cli_settings
from sleuth.config import Settings
from sleuth.core.urls import is_loopback_host

READY = "Sleuth is ready:"  # the line that carries the address; scripts and tests look for it
WARMING = "Sleuth is warming up on"  # then the port it bound: `--port 0` callers learn it from this line


class AnnouncingServer(uvicorn.Server):
    """uvicorn, saying that it warms up when the port opens and the address once research can run."""

    def __init__(self, config: uvicorn.Config, app: FastAPI, started_at: float) -> None:
        super().__init__(config)
        self._app = app
        self._started_at = started_at
        self._url = ""
        self._announcing: asyncio.Task[None] | None = None

    def _log_started_message(self, listeners: Sequence[socket.SocketType]) -> None:
        host = self.config.host
        port = listeners[0].getsockname()[1] if listeners else self.config.port  # the real one for --port 0
        self._url = f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"
        engines = self._app.state.manager.readiness()[1]
        what = f"{engines} research engine{'s' if engines != 1 else ''}" if engines else "the model client"
        click.echo(f"{WARMING} port {port} ({what}); its address follows when it can run research ...")

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started:
            self._announcing = asyncio.create_task(self._announce())

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        if self._announcing is not None:
            self._announcing.cancel()
        await super().shutdown(sockets)

    async def _announce(self) -> None:
        problem = await until_ready(self._app.state)
        elapsed = time.monotonic() - self._started_at
        click.echo(f"{READY} {self._url}  (warmed up in {elapsed:.1f} s; Ctrl+C stops it)")
        if problem is not None:
            click.echo(f"Research is refused until this is fixed: {problem}")
        if self._app.state.settings.auth_mode == "accounts" and not await asyncio.to_thread(
            self._app.state.accounts.users
        ):
            if self._app.state.settings.oidc_issuer:
                click.echo(
                    "No users yet: single sign-on makes each at their first sign-in; SLEUTH_OIDC_ADMIN_EMAILS "
                    "or `sleuth user add NAME --admin` makes an administrator."
                )
            else:
                click.echo("No one can sign in yet: add a user with `sleuth user add NAME --admin`.")


def open_bind_refusal(settings: Settings, host: str) -> str | None:
    """Why the server must not listen on `host` with these settings: without authentication,
    anyone who can reach a non-loopback address would use the server as its one user."""
    if settings.auth_mode != "none" or settings.allow_unauthenticated or is_loopback_host(host):
        return None
    return (
        f"refusing to serve on {host} without authentication (SLEUTH_AUTH=none): anyone who reaches it would "
        "act as this server's only user. Set SLEUTH_AUTH=accounts (and `sleuth user add NAME --admin`) or "
        "SLEUTH_API_TOKEN, serve on 127.0.0.1, or set SLEUTH_ALLOW_UNAUTHENTICATED=1 if something in front of "
        "it (a loopback-only port, a proxy) keeps others out."
    )


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

    started_at = time.monotonic()
    settings = cli_settings()
    refusal = open_bind_refusal(settings, host)
    if refusal is not None:
        raise click.ClickException(refusal)
    cli_check_database(settings)
    cli_check_redis(settings)
    app = create_app(settings)
    # uvicorn's own access log is off; ours (JSON lines under the data dir) replaces it.
    config = uvicorn.Config(
        app, host=host, port=port, log_level=log_level, access_log=False, timeout_graceful_shutdown=10
    )
    try:
        AnnouncingServer(config, app, started_at).run()  # exits non-zero itself when it cannot start
    except KeyboardInterrupt:
        pass  # as `uvicorn.run`: Ctrl+C during start-up is a normal way to stop

"""`/mcp` on `sleuth serve`: the MCP server over streamable HTTP, behind the API's authentication
(`api/auth.py`); a user's calls see that user's research only.

The SDK loads a web stack of its own, so it is imported after the server has started, on the
preload thread: the port opens without waiting for it, and the first `/mcp` request waits instead.
Its session manager runs in a task the app's lifespan starts and stops.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import HTTPException, Request
from fastapi.responses import JSONResponse
from starlette.types import Receive, Scope, Send

from sleuth.api.auth import authenticate
from sleuth.api.mcp.server import CALLER, build_server
from sleuth.api.services import Services
from sleuth.core import heavy

PATH = "/mcp"


@asynccontextmanager
async def _lent(services: Services) -> AsyncIterator[Services]:
    yield services  # the app's own: the app opens and closes them


class McpEndpoint:
    """The ASGI app at `/mcp`; `running` serves it for as long as the app's lifespan lasts."""

    def __init__(self) -> None:
        self._sessions: asyncio.Future[Any] | None = None  # the SDK's session manager, once it runs

    @asynccontextmanager
    async def running(self, services: Services) -> AsyncIterator[None]:
        self._sessions = asyncio.get_running_loop().create_future()
        stop = asyncio.Event()
        task = asyncio.create_task(self._serve(services, self._sessions, stop), name="mcp-sessions")
        try:
            yield
        finally:
            stop.set()
            await task

    @staticmethod
    async def _serve(services: Services, sessions: asyncio.Future[Any], stop: asyncio.Event) -> None:
        try:
            await heavy.ready("mcp")
            server = build_server(lambda: _lent(services))
            server.streamable_http_app(streamable_http_path="/")  # makes the session manager
            manager = server.session_manager
            async with manager.run():
                sessions.set_result(manager)
                await stop.wait()
        except Exception as exc:
            if not sessions.done():
                sessions.set_exception(exc)
            raise
        finally:
            if not sessions.done():
                sessions.cancel()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            principal = await asyncio.to_thread(authenticate, Request(scope, receive))
        except HTTPException as exc:
            await JSONResponse({"detail": exc.detail}, exc.status_code, exc.headers)(scope, receive, send)
            return
        CALLER.set(principal.user_id)  # this request's own context: the handlers of its messages see it
        sessions = self._sessions
        if sessions is None:
            raise RuntimeError("the MCP endpoint serves only while the app runs")
        await asyncio.wait([sessions])  # the SDK's import, the first time: a request's cancel leaves it be
        if sessions.cancelled() or sessions.exception() is not None:
            await JSONResponse({"detail": "the MCP server could not start; see the server log"}, 503)(
                scope, receive, send
            )
            return
        await sessions.result().handle_request(scope, receive, send)

"""The HTTP access log: one JSON line per request, through the handlers `core.logs` sets up."""

from __future__ import annotations

import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sleuth.api.auth import Principal
from sleuth.core.logs import access_log
from sleuth.core.redaction import redact_query


class AccessLogMiddleware:
    """Pure ASGI (no buffering of streamed bodies): one line when each HTTP request ends."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 0

        async def send_wrapper(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, send_wrapper)
        finally:
            query = scope.get("query_string", b"").decode("latin-1")
            client = scope.get("client")
            access_log.info(
                "request",
                extra={
                    "fields": {
                        "method": scope.get("method"),
                        "path": scope.get("path"),
                        "query": redact_query(query) if query else "",
                        "status": status or 500,
                        "duration_ms": round((time.perf_counter() - started) * 1000, 2),
                        "client": f"{client[0]}:{client[1]}" if client else None,
                        "user": _caller(scope),
                    }
                },
            )


def _caller(scope: Scope) -> str | None:
    """Who made the request, once `authenticate` knew (its name; None for a request it refused or never saw)."""
    principal = scope.get("state", {}).get("principal")
    return principal.name if isinstance(principal, Principal) else None

"""Readable errors: 422 bodies carry FastAPI's `detail` list plus one plain sentence."""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = [{**err, "msg": _plain(str(err.get("msg", "invalid")))} for err in exc.errors()]
        sentences = [f"{'.'.join(str(p) for p in err.get('loc', ()))}: {err['msg']}" for err in errors]
        # `input` can echo a huge or secret value back; the location and message are enough.
        detail = [{k: v for k, v in err.items() if k not in ("input", "ctx", "url")} for err in errors]
        return JSONResponse(
            status_code=422, content=jsonable_encoder({"detail": detail, "message": "; ".join(sentences)})
        )


def _plain(message: str) -> str:
    # pydantic prefixes messages of custom validators with "Value error, ".
    return message.removeprefix("Value error, ")


class BodySizeLimit:
    """Refuse a body larger than `max_bytes` (by Content-Length) with 413 before reading it.

    File uploads (`POST /api/collections/{name}/documents`) get their own, larger limit.
    """

    def __init__(self, app: ASGIApp, max_bytes: int, upload_max_bytes: int | None = None) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.upload_max_bytes = upload_max_bytes or max_bytes

    def _limit(self, scope: Scope) -> int:
        path = str(scope.get("path", ""))
        if scope.get("method") == "POST" and path.startswith("/api/collections/") and path.endswith("/documents"):
            return self.upload_max_bytes
        return self.max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            limit = self._limit(scope)
            for name, value in scope.get("headers", []):
                if name == b"content-length":
                    try:
                        too_big = int(value) > limit
                    except ValueError:
                        too_big = False
                    if too_big:
                        response = JSONResponse({"detail": f"request body larger than {limit} bytes"}, 413)
                        await response(scope, receive, send)
                        return
        await self.app(scope, receive, send)

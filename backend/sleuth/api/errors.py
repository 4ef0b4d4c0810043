"""Readable errors: 422 bodies carry FastAPI's `detail` list plus one plain sentence."""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.middleware.body_limit import RequestBodyLimitMiddleware
from starlette.types import ASGIApp, Receive, Scope, Send

from sleuth.api.openai_schemas import OPENAI_PREFIX, error_body
from sleuth.api.refused import Refused
from sleuth.store.database import DatabaseError
from sleuth.store.errors import Conflict, NotFound

# What a request that lost a race on a database constraint is told; the driver's own message
# names tables and keys, which are nobody's business outside the server log.
RACE_MESSAGE = "the request conflicted with a change made at the same time; retry it"


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = [{**err, "msg": _plain(str(err.get("msg", "invalid")))} for err in exc.errors()]
        sentences = [f"{'.'.join(str(p) for p in err.get('loc', ()))}: {err['msg']}" for err in errors]
        # `input` can echo a huge or secret value back; the location and message are enough.
        detail = [{k: v for k, v in err.items() if k not in ("input", "ctx", "url")} for err in errors]
        if _is_openai(request):
            return JSONResponse(status_code=400, content=error_body(400, "; ".join(sentences)))
        return JSONResponse(
            status_code=422, content=jsonable_encoder({"detail": detail, "message": "; ".join(sentences)})
        )

    # The OpenAI-compatible routes answer in OpenAI's error shape, which its client libraries read.
    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> Response:
        if not _is_openai(request):
            return await http_exception_handler(request, exc)
        return JSONResponse(
            status_code=exc.status_code, content=error_body(exc.status_code, str(exc.detail)), headers=exc.headers
        )

    # What the server refuses, whoever decided it (`api/starting.py`, `api/documents.py`): answered
    # as an HTTPException with the same status, detail and Retry-After would be.
    @app.exception_handler(Refused)
    async def _refused(request: Request, exc: Refused) -> Response:
        headers = None if exc.retry_after_s is None else {"Retry-After": str(exc.retry_after_s)}
        return await _http(request, StarletteHTTPException(exc.status, exc.detail, headers))

    # A store write that depended on a row another request changed meanwhile (a message to a
    # session being deleted): the store checks in the write's own transaction and says what it found.
    @app.exception_handler(NotFound)
    async def _gone(request: Request, exc: NotFound) -> JSONResponse:
        return JSONResponse(status_code=404, content={"detail": str(exc)})

    @app.exception_handler(Conflict)
    async def _conflict(request: Request, exc: Conflict) -> JSONResponse:
        return JSONResponse(
            status_code=409, content={"detail": RACE_MESSAGE if isinstance(exc, DatabaseError) else str(exc)}
        )


def _is_openai(request: Request) -> bool:
    return request.url.path.startswith(OPENAI_PREFIX)


def _plain(message: str) -> str:
    # pydantic prefixes messages of custom validators with "Value error, ".
    return message.removeprefix("Value error, ")


TOO_LARGE = "Content Too Large"  # the detail of Starlette's own 413, which the chunked path answers with


class BodySizeLimit:
    """Refuse a body larger than `max_bytes` with 413, counting bytes as they are read (Starlette's
    RequestBodyLimitMiddleware), so a chunked body without Content-Length is refused too.

    File uploads (`POST /api/collections/{name}/documents`) get their own, larger limit.
    """

    def __init__(self, app: ASGIApp, max_bytes: int, upload_max_bytes: int) -> None:
        self._default = RequestBodyLimitMiddleware(app, max_body_size=max_bytes)
        self._upload = RequestBodyLimitMiddleware(app, max_body_size=upload_max_bytes)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = str(scope.get("path", ""))
        upload = scope.get("method") == "POST" and path.startswith("/api/collections/") and path.endswith("/documents")
        limiter = self._upload if upload else self._default
        declared = Headers(scope=scope).get("content-length", "") if scope["type"] == "http" else ""
        if declared.isdigit() and int(declared) > limiter.max_body_size:
            # Refused before the app runs: Starlette would answer in plain text when the route
            # reads no body; every 413 carries the JSON error body instead.
            await JSONResponse({"detail": TOO_LARGE}, status_code=413)(scope, receive, send)
            return
        await limiter(scope, receive, send)

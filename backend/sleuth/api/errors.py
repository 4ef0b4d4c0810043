"""Readable errors: 422 bodies carry FastAPI's `detail` list plus one plain sentence."""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse


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

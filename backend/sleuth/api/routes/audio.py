"""Spoken versions of reports: start one, poll its status, fetch the file."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any, Literal

from fastapi import APIRouter, HTTPException, Request, Response, status
from fastapi.responses import FileResponse
from pydantic import BaseModel, Field
from starlette.types import Receive, Scope, Send

from sleuth.api.routes.deps import not_found, responses, settings_of, store_of
from sleuth.api.schemas import ErrorOut, ReportOut
from sleuth.audio.files import audio_file
from sleuth.audio.jobs import AudioFull, AudioJobs

router = APIRouter(tags=["audio"])


class AudioCreate(BaseModel):
    style: Literal["narration", "overview", "dialogue"] = Field(
        default="narration",
        description="narration: the report read aloud; overview: a short one-voice summary; dialogue: two voices.",
    )


class AudioProgress(BaseModel):
    stage: Literal["script", "speech"] = Field(description="script: the script is being written; speech: spoken")
    done: int = Field(description="Lines spoken so far (speech).")
    total: int = Field(description="Lines in the script (speech).")


class AudioOut(BaseModel):
    audio_id: str
    status: Literal["pending", "done", "failed"]
    style: str | None = None
    url: str | None = Field(default=None, description="Where the file is, once done.")
    media_type: str | None = None
    duration_s: float | None = None
    error: str | None = None
    progress: AudioProgress | None = Field(default=None, description="While pending, how far the job is.")


def jobs_of(request: Request) -> AudioJobs:
    return request.app.state.audio  # type: ignore[no-any-return]  # app.state is untyped; the lifespan sets it


@router.post(
    "/reports/{report_id}/audio",
    status_code=status.HTTP_202_ACCEPTED,
    response_model=AudioOut,
    responses={
        200: {"model": AudioOut, "description": "This report's audio in this style, already pending or done"},
        **responses(401, 404),
        409: {"model": ErrorOut, "description": "The report did not complete"},
        429: {"model": ErrorOut, "description": "Audio files at their limit, on this server or all (see Retry-After)"},
    },
)
async def create_audio(
    request: Request, response: Response, report_id: str, body: AudioCreate | None = None
) -> AudioOut:
    """Start making the report's audio (202), or give the one of this style already pending or done (200).

    A failed one is made again."""
    store = store_of(request)
    data = await asyncio.to_thread(store.get_report, report_id)
    if data is None:
        raise not_found("report", report_id)
    report = ReportOut.model_validate(data)
    if report.status != "completed":
        raise HTTPException(status_code=409, detail="this report did not complete; there is nothing to narrate")
    style = (body or AudioCreate()).style
    try:
        started = await jobs_of(request).start(report, report.session_id, style)
    except AudioFull as exc:
        raise HTTPException(
            status_code=429, detail=str(exc), headers={"Retry-After": str(settings_of(request).retry_after_s)}
        ) from None
    if started.new:
        return AudioOut(audio_id=started.audio_id, status="pending", style=style)
    response.status_code = status.HTTP_200_OK
    row = await asyncio.to_thread(store.get_audio, started.audio_id)
    if row is None:  # deleted with its session in between
        raise not_found("audio", started.audio_id)
    return _audio_out(request, row)


@router.get("/audio/{audio_id}", response_model=AudioOut, responses=responses(401, 404))
async def get_audio(request: Request, audio_id: str) -> AudioOut:
    row = await asyncio.to_thread(store_of(request).get_audio, audio_id)
    if row is None:
        raise not_found("audio", audio_id)
    return _audio_out(request, row)


def _audio_out(request: Request, row: dict[str, Any]) -> AudioOut:
    audio_id = str(row["id"])
    done = row["status"] == "done"
    progress = jobs_of(request).progress(audio_id) if row["status"] == "pending" else None
    return AudioOut(
        audio_id=audio_id,
        status=row["status"],
        style=row["style"],
        url=f"/api/audio/{audio_id}/file" if done else None,
        media_type=row["media_type"],
        duration_s=row["duration_s"],
        error=row["error"],
        progress=AudioProgress(stage=progress.stage, done=progress.done, total=progress.total) if progress else None,
    )


@router.get(
    "/audio/{audio_id}/file",
    response_class=FileResponse,
    responses={200: {"content": {"audio/wav": {}, "audio/mpeg": {}}}, **responses(401, 404)},
)
async def get_audio_file(request: Request, audio_id: str) -> FileResponse:
    store = store_of(request)
    row = await asyncio.to_thread(store.get_audio, audio_id)
    path = audio_file(store, audio_id) if row and row["status"] == "done" else None
    handle = await asyncio.to_thread(_open, path) if path is not None else None
    if row is None or path is None or handle is None:
        raise not_found("audio", audio_id)
    return OpenedFileResponse(
        handle, media_type=row["media_type"], filename=f"sleuth-{row['report_id']}-{row['style']}.{path.suffix[1:]}"
    )


def _open(path: Path) -> int | None:
    try:
        return os.open(path, os.O_RDONLY)
    except FileNotFoundError:  # deleted with its session since it was looked up
        return None


class OpenedFileResponse(FileResponse):
    """A file response for a file this process already holds open, so a file deleted (with its
    session) after the request found it is still sent whole: an open file stays readable. Starlette
    opens a response's file by path, so it gets the descriptor's own (/dev/fd/N)."""

    def __init__(self, handle: int, *, media_type: str | None, filename: str) -> None:
        super().__init__(f"/dev/fd/{handle}", media_type=media_type, filename=filename, stat_result=os.fstat(handle))
        self._handle = handle

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            os.close(self._handle)

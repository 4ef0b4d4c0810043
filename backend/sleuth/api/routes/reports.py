"""Stored reports as JSON and as markdown."""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import PlainTextResponse, Response

from sleuth.api.routes.deps import not_found, responses, store_of
from sleuth.api.schemas import ReportOut
from sleuth.exports.fonts import FontsMissing
from sleuth.exports.formats import MEDIA_TYPES, ExportFormat, render_export

router = APIRouter(tags=["reports"])


# Declared before `/reports/{report_id}`: that pattern would otherwise also match "x.md".
@router.get(
    "/reports/{report_id}.md",
    response_class=PlainTextResponse,
    responses={200: {"content": {"text/markdown": {}}}, **responses(401, 404)},
)
async def get_report_markdown(request: Request, report_id: str) -> Response:
    return await _export(request, report_id, "md")


def _safe(report_id: str) -> str:
    return "".join(ch for ch in report_id if ch.isalnum() or ch in "_-")[:64] or "report"


@router.get(
    "/reports/{report_id}.pdf",
    response_class=Response,
    responses={200: {"content": {"application/pdf": {}}}, **responses(401, 404)},
)
async def get_report_pdf(request: Request, report_id: str) -> Response:
    return await _export(request, report_id, "pdf")


@router.get(
    "/reports/{report_id}.docx",
    response_class=Response,
    responses={200: {"content": {MEDIA_TYPES["docx"]: {}}}, **responses(401, 404)},
)
async def get_report_docx(request: Request, report_id: str) -> Response:
    return await _export(request, report_id, "docx")


async def _export(request: Request, report_id: str, fmt: ExportFormat) -> Response:
    report = ReportOut.model_validate(await _report_or_404(request, report_id))
    try:
        body = await asyncio.to_thread(render_export, report, fmt)
    except FontsMissing as exc:
        raise HTTPException(status_code=503, detail=str(exc)) from None
    name = f"sleuth-{_safe(report_id)}.{fmt}"
    return Response(
        body, media_type=MEDIA_TYPES[fmt], headers={"Content-Disposition": f'attachment; filename="{name}"'}
    )


@router.get("/reports/{report_id}", response_model=ReportOut, responses=responses(401, 404))
async def get_report(request: Request, report_id: str) -> ReportOut:
    return ReportOut.model_validate(await _report_or_404(request, report_id))


async def _report_or_404(request: Request, report_id: str) -> dict[str, Any]:
    report = await asyncio.to_thread(store_of(request).get_report, report_id)
    if report is None:
        raise not_found("report", report_id)
    return report

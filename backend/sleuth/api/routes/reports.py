"""Stored reports as JSON and as markdown."""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import PlainTextResponse

from sleuth.api.routes.deps import not_found, responses, store_of
from sleuth.api.schemas import ReportOut
from sleuth.research.export import report_markdown

router = APIRouter(tags=["reports"])


# Declared before `/reports/{report_id}`: that pattern would otherwise also match "x.md".
@router.get(
    "/reports/{report_id}.md",
    response_class=PlainTextResponse,
    responses={200: {"content": {"text/markdown": {}}}, **responses(401, 404)},
)
async def get_report_markdown(request: Request, report_id: str) -> PlainTextResponse:
    report = ReportOut.model_validate(await _report_or_404(request, report_id))
    text = report_markdown(report.question, report.markdown, report.sources)
    return PlainTextResponse(
        text,
        media_type="text/markdown; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="sleuth-{_safe(report_id)}.md"'},
    )


def _safe(report_id: str) -> str:
    return "".join(ch for ch in report_id if ch.isalnum() or ch in "_-")[:64] or "report"


@router.get("/reports/{report_id}", response_model=ReportOut, responses=responses(401, 404))
async def get_report(request: Request, report_id: str) -> ReportOut:
    return ReportOut.model_validate(await _report_or_404(request, report_id))


async def _report_or_404(request: Request, report_id: str) -> dict[str, Any]:
    report = await asyncio.to_thread(store_of(request).get_report, report_id)
    if report is None:
        raise not_found("report", report_id)
    return report

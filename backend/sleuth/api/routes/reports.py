"""Stored reports as JSON and as markdown."""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import PlainTextResponse

from sleuth.api.routes.deps import not_found, responses, store_of
from sleuth.api.schemas import ReportOut

router = APIRouter(tags=["reports"])


# Declared before `/reports/{report_id}`: that pattern would otherwise also match "x.md".
@router.get(
    "/reports/{report_id}.md",
    response_class=PlainTextResponse,
    responses={200: {"content": {"text/markdown": {}}}, **responses(401, 404)},
)
async def get_report_markdown(request: Request, report_id: str) -> PlainTextResponse:
    report = await _report_or_404(request, report_id)
    return PlainTextResponse(report["markdown"], media_type="text/markdown; charset=utf-8")


@router.get("/reports/{report_id}", response_model=ReportOut, responses=responses(401, 404))
async def get_report(request: Request, report_id: str) -> ReportOut:
    return ReportOut.model_validate(await _report_or_404(request, report_id))


async def _report_or_404(request: Request, report_id: str) -> dict[str, Any]:
    report = await asyncio.to_thread(store_of(request).get_report, report_id)
    if report is None:
        raise not_found("report", report_id)
    return report

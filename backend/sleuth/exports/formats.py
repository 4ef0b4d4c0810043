"""Which export formats exist, and one entry point that renders a stored report in any of them."""

from __future__ import annotations

from typing import Literal

from sleuth.exports.content import exportable
from sleuth.exports.docx import report_docx
from sleuth.exports.markdown import report_document
from sleuth.exports.pdf import report_pdf
from sleuth.stream.results import ResearchResult

ExportFormat = Literal["md", "pdf", "docx"]
FORMATS: tuple[ExportFormat, ...] = ("md", "pdf", "docx")
MEDIA_TYPES: dict[ExportFormat, str] = {
    "md": "text/markdown; charset=utf-8",
    "pdf": "application/pdf",
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
}


def render_export(report: ResearchResult, fmt: ExportFormat) -> bytes:
    """Every export comes through here, and so through `exportable`: the formats below render only
    text XML can hold, and no image."""
    report = exportable(report)
    if fmt == "md":
        return report_document(report).encode("utf-8")
    if fmt == "pdf":
        return report_pdf(report)
    return report_docx(report)

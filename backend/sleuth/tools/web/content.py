"""Turn a fetched resource into (title, text) according to its content type."""

from __future__ import annotations

from sleuth.tools.base import ToolError
from sleuth.tools.extraction.html import html_to_text
from sleuth.tools.extraction.pdf import pdf_to_text
from sleuth.tools.web.fetch import FetchedResource

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
PDF_TYPES = frozenset({"application/pdf", "application/x-pdf"})
TEXT_TYPES = frozenset({"text/plain"})


def _sniff(body: bytes) -> str:
    """A content type for responses that do not declare one."""
    head = body[:1024].lstrip().lower()
    if head.startswith(b"%pdf-"):
        return "application/pdf"
    if head.startswith((b"<!doctype html", b"<html")) or b"<body" in head:
        return "text/html"
    return ""


def extract(resource: FetchedResource) -> tuple[str, str]:
    """Return (title, text); raise ToolError for types Sleuth does not read."""
    mime = resource.content_type or _sniff(resource.body)
    if mime in HTML_TYPES:
        # A page cut at the size cap still has useful text; the parser tolerates the missing end.
        return html_to_text(resource.body, resource.charset)
    if mime in PDF_TYPES:
        if resource.truncated:
            raise ToolError(f"refused: the PDF at {resource.url} is larger than the size cap")
        return pdf_to_text(resource.body)
    if mime in TEXT_TYPES:
        return "", _decode(resource.body, resource.charset).strip()
    shown = mime or "unknown"
    raise ToolError(f"refused: content type {shown!r} is not supported (only HTML, PDF and plain text)")


def _decode(body: bytes, charset: str | None) -> str:
    try:
        return body.decode(charset or "utf-8", errors="replace")
    except LookupError:  # an unknown charset name from the server
        return body.decode("utf-8", errors="replace")

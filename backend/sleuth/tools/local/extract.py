"""Turn a file (md, txt, rst, html, pdf) into a title and plain text."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from sleuth.tools.extraction.errors import ExtractError
from sleuth.tools.extraction.html import html_document
from sleuth.tools.extraction.pdf import pdf_to_text

# Raise it when a file extracts to something else than before (a kind of page now skipped, text
# rendered otherwise): the next index run of a folder re-reads every file an older one extracted.
EXTRACTION_VERSION = 2
SUPPORTED_SUFFIXES = frozenset({".md", ".markdown", ".txt", ".text", ".rst", ".html", ".htm", ".pdf"})
_TITLE_MAX = 200

__all__ = ["ExtractError", "Extracted", "Skip", "extract", "is_supported"]


class Skip(ExtractError):
    """The file is readable but not worth indexing (a contents or index page); the message says why."""


@dataclass
class Extracted:
    title: str
    text: str
    warnings: list[str] = field(default_factory=list)


def is_supported(path: Path) -> bool:
    return path.suffix.lower() in SUPPORTED_SUFFIXES


def extract(path: Path, data: bytes) -> Extracted:
    """Title and text of `data` (the bytes of `path`); ExtractError if it has no usable text."""
    suffix = path.suffix.lower()
    if suffix == ".pdf":
        result = _pdf(data, path)
    elif suffix in {".html", ".htm"}:
        result = _html(data, path)
    else:
        result = _plain(data, path)
    result.text = result.text.strip()
    if not result.text:
        raise ExtractError("no text could be extracted")
    result.title = _clean_title(result.title) or path.stem
    return result


def _clean_title(title: str) -> str:
    title = " ".join(title.split())
    return title[: _TITLE_MAX - 1] + "…" if len(title) > _TITLE_MAX else title


def _decode(data: bytes) -> tuple[str, list[str]]:
    if b"\x00" in data[:8192]:
        raise ExtractError("looks like a binary file, not text")
    try:
        return data.decode("utf-8-sig"), []
    except UnicodeDecodeError as exc:
        # Keep the readable part rather than lose the whole file to a few stray bytes.
        return data.decode("utf-8", errors="replace"), [
            f"not valid UTF-8 (byte {exc.start}); undecodable bytes replaced"
        ]


_FRONT_MATTER = re.compile(r"\A---\s*\n(.*?)\n---\s*\n", re.DOTALL)
_FM_TITLE = re.compile(r"^title:\s*[\"']?(.+?)[\"']?\s*$", re.MULTILINE)
_MD_H1 = re.compile(r"^\s{0,3}#\s+(.+?)\s*#*\s*$", re.MULTILINE)


def _plain(data: bytes, path: Path) -> Extracted:
    text, warnings = _decode(data)
    title = ""
    front = _FRONT_MATTER.match(text)
    if front:
        found = _FM_TITLE.search(front.group(1))
        title = found.group(1) if found else ""
        text = text[front.end() :]
    if not title:
        h1 = _MD_H1.search(text)
        if h1 and path.suffix.lower() in {".md", ".markdown"}:
            title = h1.group(1)
    if not title:
        first = next((line.strip() for line in text.splitlines() if line.strip()), "")
        # A short first line reads as a title; a long one is just the first sentence.
        title = first.lstrip("#").strip() if 0 < len(first) <= 100 else ""
    return Extracted(title=title, text=text, warnings=warnings)


def _html(data: bytes, path: Path) -> Extracted:
    page = html_document(data)
    if page.kind == "toc":
        raise Skip("a table-of-contents page (mostly links); not indexed")
    if page.kind == "index":
        raise Skip("an alphabetical index page; not indexed")
    title = page.title
    if not title:
        h1 = _MD_H1.search(page.text)
        title = h1.group(1) if h1 else ""
    return Extracted(title=title, text=page.text)


def _pdf(data: bytes, path: Path) -> Extracted:
    title, text = pdf_to_text(data)
    return Extracted(title=title, text=text)

"""Turn a file (md, txt, html, pdf) into a title and plain text."""

from __future__ import annotations

import io
import logging
import re
from dataclasses import dataclass, field
from pathlib import Path

SUPPORTED_SUFFIXES = frozenset({".md", ".markdown", ".txt", ".text", ".rst", ".html", ".htm", ".pdf"})
_TITLE_MAX = 200

# pypdf logs every oddity of a damaged file; the indexer reports the outcome as one error line
# instead. A NullHandler keeps Python's last-resort handler from printing them to the terminal
# while still letting an application that configures logging see them.
logging.getLogger("pypdf").addHandler(logging.NullHandler())


class ExtractError(Exception):
    """The file could not be turned into text; the message says why, for an error line."""


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


# Private-use characters: cannot occur in real text, survive BeautifulSoup untouched.
_PRE_MARK = "\ue000"
_PRE_NEWLINE = "\ue001"
_BLOCK_TAGS = (
    "p",
    "div",
    "li",
    "blockquote",
    "section",
    "article",
    "main",
    "tr",
    "table",
    "dd",
    "dt",
    "br",
    "ul",
    "ol",
)
_DROP_TAGS = ("script", "style", "noscript", "template", "svg", "nav", "header", "footer", "aside", "form")


def _html(data: bytes, path: Path) -> Extracted:
    from bs4 import BeautifulSoup  # imported here: only HTML files pay for it

    soup = BeautifulSoup(data, "html.parser")
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    for tag in soup(_DROP_TAGS + ("title", "head")):
        tag.decompose()
    # Headings become markdown headings so the chunker splits on them; blocks become paragraphs.
    for level in range(1, 7):
        for tag in soup.find_all(f"h{level}"):
            text = tag.get_text(" ", strip=True)
            if not title and level == 1:
                title = text
            tag.replace_with(f"\n\n{'#' * level} {text}\n\n")
    # Code keeps its line breaks and indentation: hide them from the whitespace squashing below.
    for tag in soup.find_all("pre"):
        code = tag.get_text().strip("\n").replace("\n", _PRE_NEWLINE)
        tag.replace_with(f"\n\n{_PRE_MARK}{code}\n\n")
    for tag in soup.find_all(_BLOCK_TAGS):
        tag.insert_before("\n\n")
        tag.insert_after("\n\n")
    paragraphs = []
    for para in re.split(r"\n\s*\n", soup.get_text()):
        if para.strip().startswith(_PRE_MARK):
            paragraphs.append(para.strip().removeprefix(_PRE_MARK).replace(_PRE_NEWLINE, "\n").rstrip())
        elif squashed := " ".join(para.split()):
            paragraphs.append(squashed)
    return Extracted(title=title, text="\n\n".join(paragraphs))


def _pdf(data: bytes, path: Path) -> Extracted:
    from pypdf import PdfReader  # imported here: only PDF files pay for it
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            raise ExtractError("encrypted PDF")
        pages = [page.extract_text() or "" for page in reader.pages]
        meta_title = ""
        if reader.metadata is not None and reader.metadata.title:
            meta_title = str(reader.metadata.title)
    except ExtractError:
        raise
    except (PdfReadError, ValueError, KeyError, TypeError, AttributeError, OSError) as exc:
        # pypdf signals corruption with a variety of exception types.
        raise ExtractError(f"unreadable PDF ({type(exc).__name__}: {exc})") from exc
    text = "\n\n".join(page.strip() for page in pages if page.strip())
    if not text:
        raise ExtractError("PDF has no extractable text (scanned images?)")
    title = meta_title
    if not title:
        first = next((line.strip() for line in text.splitlines() if line.strip()), "")
        title = first if len(first) <= 100 else ""
    return Extracted(title=title, text=text)

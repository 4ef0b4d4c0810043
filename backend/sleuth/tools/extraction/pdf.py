"""PDF to text with pypdf, for web pages and local files alike."""

from __future__ import annotations

import io
import logging

from pypdf import PdfReader
from pypdf.errors import PdfReadError

from sleuth.tools.extraction.errors import ExtractError

# pypdf logs every malformed-object warning; the caller reports the outcome as one line instead.
logging.getLogger("pypdf").setLevel(logging.ERROR)

MAX_PAGES = 2000


def pdf_to_text(data: bytes, *, max_pages: int = MAX_PAGES) -> tuple[str, str]:
    """Return (title, text) of a PDF: page texts joined by blank lines; title from its metadata.

    ExtractError (a ToolError) says why a PDF could not be read: encrypted, damaged, or only images.
    """
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise ExtractError("refused: the PDF is encrypted")
        pages = [page.extract_text() or "" for page in reader.pages[:max_pages]]
        metadata = reader.metadata
        title = str(metadata.get("/Title") or "").strip() if metadata is not None else ""
    except ExtractError:
        raise
    except (PdfReadError, ValueError, KeyError, TypeError, AttributeError, OSError) as exc:
        # pypdf signals corruption with a variety of exception types.
        raise ExtractError(f"could not read the PDF ({type(exc).__name__})") from None
    text = "\n\n".join(page.strip() for page in pages if page.strip())
    if not text:
        raise ExtractError("the PDF has no extractable text (scanned images?)")
    if not title:
        first = next((line.strip() for line in text.splitlines() if line.strip()), "")
        title = first if len(first) <= 100 else ""
    return title, text

"""PDF to text with pypdf, for web pages and local files alike.

pypdf bounds the work one file can cause (decompressed bytes per stream, tokens per content
stream, page-tree depth, ...) and raises LimitReachedError past a bound; every pypdf error, that
one included, is a one-line ExtractError here, so a crafted file is refused, never a crash.
"""

from __future__ import annotations

import io
import logging

from sleuth.core import heavy
from sleuth.tools.extraction.errors import ExtractError

# pypdf logs every malformed-object warning; the caller reports the outcome as one line instead.
logging.getLogger("pypdf").setLevel(logging.ERROR)

MAX_PAGES = 2000
# pypdf's messages say which bound was reached; a crafted file must not make the reason long.
_REASON_CHARS = 120


def pdf_to_text(data: bytes, *, max_pages: int = MAX_PAGES) -> tuple[str, str]:
    """Return (title, text) of a PDF: page texts joined by blank lines; title from its metadata.

    ExtractError (a ToolError) says why a PDF could not be read: encrypted, damaged, over one of
    pypdf's safety limits, or only images.
    """
    try:
        reader = heavy.PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise ExtractError("refused: the PDF is encrypted")
        pages = [page.extract_text() or "" for page in reader.pages[:max_pages]]
        metadata = reader.metadata
        title = str(metadata.get("/Title") or "").strip() if metadata is not None else ""
    except ExtractError:
        raise
    except heavy.LimitReachedError as exc:
        reason = " ".join(str(exc).split())[:_REASON_CHARS]
        raise ExtractError(f"refused: the PDF goes past a safety limit of the reader ({reason})") from None
    except (heavy.PyPdfError, ValueError, KeyError, TypeError, AttributeError, OSError, RecursionError) as exc:
        # pypdf signals corruption with a variety of exception types.
        raise ExtractError(f"could not read the PDF ({type(exc).__name__})") from None
    text = "\n\n".join(page.strip() for page in pages if page.strip())
    if not text:
        raise ExtractError("the PDF has no extractable text (scanned images?)")
    if not title:
        first = next((line.strip() for line in text.splitlines() if line.strip()), "")
        title = first if len(first) <= 100 else ""
    return title, text

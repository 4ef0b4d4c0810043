"""PDF to text with pypdf."""

from __future__ import annotations

import io
import logging

from pypdf import PdfReader
from pypdf.errors import PdfReadError

from sleuth.tools.base import ToolError

# pypdf logs every malformed-object warning; one bad PDF should not flood Sleuth's log.
logging.getLogger("pypdf").setLevel(logging.ERROR)


def pdf_to_text(data: bytes, *, max_pages: int = 200) -> tuple[str, str]:
    """Return (title, text) of a PDF: page texts joined by blank lines; title from its metadata."""
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise ToolError("refused: the PDF is encrypted")
        pages = [page.extract_text() or "" for page in reader.pages[:max_pages]]
        title = str(reader.metadata.get("/Title") or "").strip() if reader.metadata else ""
    except ToolError:
        raise
    except (PdfReadError, ValueError, KeyError, TypeError, OSError) as exc:
        raise ToolError(f"could not read the PDF: {type(exc).__name__}") from None
    text = "\n\n".join(page.strip() for page in pages if page.strip())
    return title, text

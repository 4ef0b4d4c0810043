"""One extraction module for web pages and local files: HTML and PDF to title and text.

The HTML parser and the PDF reader load on first use: a run over an indexed corpus needs neither.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sleuth.core.lazy import lazy_exports
from sleuth.tools.extraction.errors import ExtractError

if TYPE_CHECKING:
    from sleuth.tools.extraction.html import HtmlText, html_document, html_to_text
    from sleuth.tools.extraction.pdf import pdf_to_text

__all__ = ["ExtractError", "HtmlText", "html_document", "html_to_text", "pdf_to_text"]
__getattr__ = lazy_exports(
    __name__, {"HtmlText": "html", "html_document": "html", "html_to_text": "html", "pdf_to_text": "pdf"}
)

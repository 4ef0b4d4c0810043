"""One extraction module for web pages and local files: HTML and PDF to title and text."""

from sleuth.tools.extraction.errors import ExtractError
from sleuth.tools.extraction.html import HtmlText, html_document, html_to_text
from sleuth.tools.extraction.pdf import pdf_to_text

__all__ = ["ExtractError", "HtmlText", "html_document", "html_to_text", "pdf_to_text"]

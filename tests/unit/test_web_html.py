"""HTML and content-type extraction, without any network."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from sleuth.tools.base import ToolError
from sleuth.tools.extraction.html import html_to_text
from sleuth.tools.extraction.pdf import pdf_to_text
from sleuth.tools.web.content import extract
from sleuth.tools.web.fetch import FetchedResource
from support.pdf import deep_page_tree_pdf, deflate_bomb_pdf


def resource(
    body: bytes, content_type: str = "text/html", truncated: bool = False, charset: str | None = None
) -> FetchedResource:
    return FetchedResource(
        url="https://example.org/x", content_type=content_type, charset=charset, body=body, truncated=truncated
    )


def test_prefers_the_densest_article_and_drops_chrome_by_class() -> None:
    title, text = html_to_text(
        """<html><head><title>T</title></head><body>
        <div id="menu">MENU-ITEMS</div>
        <div class="site-header">HEADER</div>
        <article><p>Short teaser.</p></article>
        <article><h2>Real story</h2><p>The long body of the real story, with enough words.</p>
          <div class="share-buttons social">SHARE</div>
          <div hidden>HIDDEN</div><div style="display: none">INVISIBLE</div>
          <div aria-hidden="true">ARIA</div>
          <p>Second paragraph<br>after a break.</p>
          <table><tr><th>Name</th><th>Value</th></tr><tr><td>a</td><td>1</td></tr></table>
          <pre>def f():
    return 1</pre>
        </article>
        <div class="unrelated-work">not chrome</div>
        </body></html>"""
    )
    assert title == "T"
    assert text.startswith("## Real story")
    assert "Short teaser" not in text
    for chrome in ("MENU", "HEADER", "SHARE", "HIDDEN", "INVISIBLE", "ARIA"):
        assert chrome not in text
    assert "Second paragraph\nafter a break." in text
    assert "Name | Value |" in text and "a | 1 |" in text
    assert "def f():\n    return 1" in text


def test_falls_back_to_body_without_semantic_tags() -> None:
    title, text = html_to_text("<body><h1>Heading</h1><div>Plain <b>div</b> text</div><!-- a comment --></body>")
    assert title == "Heading"
    assert text == "# Heading\n\nPlain div text"


def test_declared_charset_is_used() -> None:
    title, text = extract(resource("<p>caf\u00e9</p>".encode("latin-1"), charset="latin-1"))
    assert text == "caf\u00e9"


def test_missing_content_type_is_sniffed() -> None:
    assert extract(resource(b"<!doctype html><p>hi</p>", content_type=""))[1] == "hi"
    with pytest.raises(ToolError, match="content type 'unknown' is not supported"):
        extract(resource(b"\x00\x01binary", content_type=""))


def test_truncated_pdf_is_refused_and_bad_pdf_is_clear() -> None:
    with pytest.raises(ToolError, match="larger than the size cap"):
        extract(resource(b"%PDF-1.4 ...", content_type="application/pdf", truncated=True))
    with pytest.raises(ToolError, match="could not read the PDF"):
        pdf_to_text(b"%PDF-1.4 this is not really a pdf")


def test_plain_text_with_unknown_charset() -> None:
    assert extract(resource(b"hello", content_type="text/plain", charset="x-made-up"))[1] == "hello"


@pytest.mark.parametrize(
    ("pdf", "limit"),
    [(deflate_bomb_pdf, "Limit reached while decompressing"), (deep_page_tree_pdf, "Maximum page tree depth reached")],
)
def test_a_pdf_past_the_readers_limits_is_refused_with_the_reason(pdf: Callable[[], bytes], limit: str) -> None:
    with pytest.raises(ToolError, match=rf"^refused: the PDF goes past a safety limit of the reader \({limit}"):
        pdf_to_text(pdf())


def test_deep_nesting_and_omitted_end_tags() -> None:
    depth = 3000
    title, text = html_to_text("<body>" + "<div>" * depth + "<p>deep text</p>" + "</div>" * depth + "</body>")
    assert text == "deep text"
    rows = "".join(f"<tr><td>r{i}<td>v{i}" for i in range(200))
    text = html_to_text(f"<body><table><tr><th>k<th>v{rows}</table></body>")[1]
    assert text.splitlines()[:4] == ["| k | v |", "| --- | --- |", "| r0 | v0 |", "| r1 | v1 |"]
    assert len(text) < 5000  # each row once, not each row with every row after it


def test_a_list_item_that_holds_paragraphs_keeps_its_marker() -> None:
    page = (
        "<body><p>A CREATE TABLE command specifies:</p><ul>"
        "<li><p>The name of the new table.</p></li>"
        "<li><p>The database in which it is created.</p><p>Tables may be temporary.</p></li>"
        "<li>A plain item</li><li><ul><li>A nested item</li></ul></li></ul></body>"
    )
    assert html_to_text(page)[1].split("\n\n") == [
        "A CREATE TABLE command specifies:",
        "- The name of the new table.",
        "- The database in which it is created.",
        "Tables may be temporary.",
        "- A plain item",
        "- A nested item",
    ]

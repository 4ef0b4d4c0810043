"""The report document as HTML for the PDF writer: markdown rendered safely, citations made clickable.

Raw HTML in the markdown is escaped, never passed through: the text came from models and web pages.
An image is rendered as its text, never as `<img>`: a PDF writer would read the file or fetch the URL.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence

from sleuth.core import heavy
from sleuth.core.markdown import image_caption
from sleuth.exports.markdown import report_document
from sleuth.stream.results import ResearchResult

_CITATION = re.compile(r"(?<!\w)\[(\d{1,4})\](?!\()")


_INNER_TAG = re.compile(r"<(?!/?(?:table|thead|tbody|tr|th|td)\b)[^>]*>")


def _plain_cells(table: str) -> str:
    """PDF table cells hold text only: inline markup inside them is dropped, its text kept."""
    return _INNER_TAG.sub("", table)


def markdown_parser() -> heavy.MarkdownIt:
    """The parser of the PDF and DOCX exports: tables, no raw HTML, and each image as plain text."""
    md = heavy.MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")
    md.core.ruler.after("inline", "images_as_text", _images_as_text)
    return md


def _images_as_text(state: heavy.StateCore) -> None:
    for block in state.tokens:
        if block.type == "inline" and block.children:
            block.children = [_image_text(token) if token.type == "image" else token for token in block.children]


def _image_text(image: heavy.Token) -> heavy.Token:
    """An image token as a text token: `alt (url)`, the URL written out, neither loaded nor linked."""
    text = heavy.Token("text", "", 0)
    text.content = image_caption(_alt(image.children or []), str(image.attrs.get("src") or ""))
    return text


def _alt(tokens: Sequence[heavy.Token]) -> str:
    """An image's alt text without its markup, as CommonMark defines it."""
    parts = []
    for token in tokens:
        if token.type in ("text", "code_inline"):
            parts.append(token.content)
        elif token.type in ("softbreak", "hardbreak"):
            parts.append(" ")
        else:
            parts.append(_alt(token.children or []))
    return "".join(parts)


def report_html(report: ResearchResult, cite_target: str) -> tuple[str, str]:
    """(document up to the sources, the sources list) as HTML, from the same markdown as the .md export.

    `[n]` outside code and links becomes a link to `cite_target` (where the sources list is), whose
    entries link on to each source's URL.
    """
    known = {s.number for s in report.sources}
    document = report_document(report, rendered=True)
    head, marker, tail = document.rpartition("\n## Sources\n")
    main, sources = (head, marker + tail) if marker else (document, "")
    md = markdown_parser()

    def cite(match: re.Match[str]) -> str:
        number = int(match.group(1))
        return f'<a href="{escape(cite_target)}">[{number}]</a>' if number in known else match.group(0)

    def linked(html_text: str) -> str:
        parts = re.split(
            r"(<table>.*?</table>|<pre>.*?</pre>|<code>.*?</code>|<a [^>]*>.*?</a>)", html_text, flags=re.S
        )
        return "".join(
            (_plain_cells(part) if part.startswith("<table>") else part) if i % 2 else _CITATION.sub(cite, part)
            for i, part in enumerate(parts)
        )

    return linked(md.render(main)), md.render(sources) if sources else ""


def escape(text: str) -> str:
    return html.escape(text, quote=True)

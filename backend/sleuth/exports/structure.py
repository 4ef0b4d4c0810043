"""The report document as HTML for the PDF writer: markdown rendered safely, citations made clickable.

Raw HTML in the markdown is escaped, never passed through: the text came from models and web pages.
"""

from __future__ import annotations

import html
import re

from markdown_it import MarkdownIt

from sleuth.exports.markdown import report_document
from sleuth.research.types import ResearchResult

_CITATION = re.compile(r"(?<!\w)\[(\d{1,4})\](?!\()")


_INNER_TAG = re.compile(r"<(?!/?(?:table|thead|tbody|tr|th|td)\b)[^>]*>")


def _plain_cells(table: str) -> str:
    """PDF table cells hold text only: inline markup inside them is dropped, its text kept."""
    return _INNER_TAG.sub("", table)


def markdown_parser() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")


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

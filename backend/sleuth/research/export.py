"""A stored report as one markdown file: the question as title, the verified text, its sources."""

from __future__ import annotations

from collections.abc import Sequence

from sleuth.stream.packets import NumberedSource


def _escape_title(title: str) -> str:
    # A title is link text: brackets would end it early, newlines would break the list item.
    return " ".join(title.split()).replace("[", "\\[").replace("]", "\\]")


def report_markdown(question: str, markdown: str, sources: Sequence[NumberedSource]) -> str:
    """`# <question>`, the report, a `## Sources` list of numbered titles and URLs, a trailing newline."""
    heading = " ".join(question.split()) or "Report"
    parts = [f"# {heading}", markdown.strip()] if markdown.strip() else [f"# {heading}"]
    lines = [f"{s.number}. [{_escape_title(s.title or s.url)}](<{s.url}>)" for s in sorted(sources, key=_number)]
    parts.append("## Sources\n\n" + ("\n".join(lines) if lines else "No sources were cited."))
    return "\n\n".join(parts) + "\n"


def _number(source: NumberedSource) -> int:
    return source.number

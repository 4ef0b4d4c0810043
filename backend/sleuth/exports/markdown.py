"""The report as one markdown document: question, title, summary, key findings, body, numbered sources."""

from __future__ import annotations

import re
from collections.abc import Sequence

from sleuth.stream.packets import KeyFinding, NumberedSource
from sleuth.stream.results import ResearchResult


def citation_markers(numbers: Sequence[int]) -> str:
    return "".join(f"[{n}]" for n in numbers)


def plain(text: str) -> str:
    """Text shown as written: markdown's emphasis and link characters escaped (`__getattr__` stays whole)."""
    return re.sub(r"([\\`*_\[\]<>#])", r"\\\1", text)


def document_markdown(
    *,
    question: str,
    title: str,
    summary: str,
    key_findings: Sequence[KeyFinding],
    markdown: str,
    sources: Sequence[NumberedSource],
    rendered: bool = False,
) -> str:
    """The `.md` export (`# <question>`, the report, `## Sources`) with the artifact's title, summary
    and key findings leading the report.

    `rendered`: the markdown is for a renderer (PDF, DOCX), so the question is escaped to show as typed.
    """
    question = " ".join(question.split())
    parts = []
    if title and _words(title) != _words(question):  # under `# <question>`, the same words again say nothing
        parts.append(f"**{plain(title)}**")
    if summary:
        parts.append(summary)
    if key_findings:
        bullets = "\n".join(f"- {f.text} {citation_markers(f.citations)}".rstrip() for f in key_findings)
        parts.append(f"## Key findings\n\n{bullets}")
    if markdown.strip():
        parts.append(markdown.strip())
    return report_markdown(plain(question) if rendered else question, "\n\n".join(parts), sources)


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def report_document(report: ResearchResult, rendered: bool = False) -> str:
    return document_markdown(
        rendered=rendered,
        question=report.question,
        title=report.title,
        summary=report.summary,
        key_findings=report.key_findings,
        markdown=report.markdown,
        sources=report.sources,
    )


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

"""The report as one markdown document: question, title, summary, key findings, body, numbered sources."""

from __future__ import annotations

import re
from collections.abc import Sequence

from sleuth.research.types import ResearchResult
from sleuth.stream.packets import KeyFinding, NumberedSource


def citation_markers(numbers: Sequence[int]) -> str:
    return "".join(f"[{n}]" for n in numbers)


def plain(text: str) -> str:
    """Text shown as written: markdown's emphasis and link characters escaped (`__getattr__` stays whole)."""
    return re.sub(r"([\\`*_\[\]<>#])", r"\\\1", text)


def _link_text(text: str) -> str:
    return text.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")


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
    """Starts with `# <question>` and ends with a `## Sources` list, so it reads well on its own.

    `rendered`: the markdown is for a renderer (PDF, DOCX), so the question is escaped to show as typed.
    """
    question = " ".join(question.split())
    parts = [f"# {plain(question) if rendered else question}"]
    if title:
        parts.append(f"**{plain(title)}**")
    if summary:
        parts.append(summary)
    if key_findings:
        bullets = "\n".join(f"- {f.text} {citation_markers(f.citations)}".rstrip() for f in key_findings)
        parts.append(f"## Key findings\n\n{bullets}")
    if markdown:
        parts.append(markdown)
    if sources:
        lines = "\n".join(f"{s.number}. [{_link_text(s.title or s.url)}]({s.url})" for s in sources)
        parts.append(f"## Sources\n\n{lines}")
    return "\n\n".join(parts) + "\n"


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

"""The report as one markdown document: question, title, summary, key findings, body, numbered sources."""

from __future__ import annotations

from collections.abc import Sequence

from sleuth.research.types import ResearchResult
from sleuth.stream.packets import KeyFinding, NumberedSource


def citation_markers(numbers: Sequence[int]) -> str:
    return "".join(f"[{n}]" for n in numbers)


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
) -> str:
    """Starts with `# <question>` and ends with a `## Sources` list, so it reads well on its own."""
    parts = [f"# {' '.join(question.split())}"]
    if title:
        parts.append(f"**{title}**")
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


def report_document(report: ResearchResult) -> str:
    return document_markdown(
        question=report.question,
        title=report.title,
        summary=report.summary,
        key_findings=report.key_findings,
        markdown=report.markdown,
        sources=report.sources,
    )

"""The article DeepResearch Bench's RACE and FACT scripts read: the verified report and its numbered sources."""

from __future__ import annotations

from sleuth.stream.results import ResearchResult


def article_text(result: ResearchResult) -> str:
    """The report followed by a `## Sources` list whose `[n]` match the report's markers."""
    if not result.markdown.strip():
        return ""
    lines = [result.markdown.strip()]
    if result.sources:
        lines.append("\n## Sources\n")
        lines.extend(f"[{s.number}] {s.title or s.url} — {s.url}" for s in result.sources)
    return "\n".join(lines) + "\n"

"""A run's packets as an OpenAI chat reply: progress as short reasoning lines, then the verified
report (or the clarifying questions) as the content, then the run's real token counts.

Only the verified report reaches `content`; the draft that streams before it is not shown, so a
chat client never displays a citation that verification removed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sleuth.api.openai_schemas import Usage
from sleuth.exports.markdown import document_markdown
from sleuth.stream.packets import KeyFinding, NumberedSource

MAX_LINE_CHARS = 200


@dataclass
class ChatReply:
    """What the packets of one run have said so far, read one packet object at a time."""

    question: str = ""
    reasoning: list[str] = field(default_factory=list)
    content: str = ""
    usage: Usage | None = None
    stop_reason: str | None = None
    errors: list[str] = field(default_factory=list)

    def read(self, obj: dict[str, Any]) -> tuple[str, str]:
        """The reasoning and the content this packet adds (either may be empty)."""
        kind = obj["type"]
        if kind == "run_start":
            self.question = obj["question"]
        elif kind == "clarification":
            return "", self._say(asking(obj["questions"]))
        elif kind == "report":
            return "", self._say(_document(self.question, obj))
        elif kind == "summary":
            self.usage = Usage(
                prompt_tokens=obj["input_tokens"],
                completion_tokens=obj["output_tokens"],
                total_tokens=obj["input_tokens"] + obj["output_tokens"],
            )
        elif kind == "error" and not obj["recoverable"]:
            self.errors.append(obj["message"])
        elif kind == "stop":
            self.stop_reason = obj["reason"]
            if not self.content and self.errors:
                return "", self._say(f"The research failed: {self.errors[-1]}")
            if not self.content and obj["reason"] == "cancelled":
                return "", self._say("The research was cancelled.")
        line = progress_line(obj)
        if line is None:
            return "", ""
        self.reasoning.append(line)
        return line + "\n", ""

    def _say(self, text: str) -> str:
        self.content += text
        return text


def asking(questions: list[str]) -> str:
    """Clarifying questions as the assistant asks them, numbered."""
    return "\n".join(f"{number}. {question}" for number, question in enumerate(questions, 1))


def progress_line(obj: dict[str, Any]) -> str | None:
    """One short line for a step a reader follows, or None for the packets that are detail."""
    kind = obj["type"]
    if kind == "run_start":
        searched = ", ".join(obj["sources"])
        return _short(f"Researching: {obj['question']}") + (f" (searching {searched})" if searched else "")
    if kind == "plan_done":
        return "Plan:\n" + "\n".join(_short(f"{n}. {step}") for n, step in enumerate(obj["steps"], 1))
    if kind == "research_agent_start":
        return _short(f"Started: {obj['task']}")
    if kind == "search_queries":
        return _short("Searching: " + "; ".join(obj["queries"]))
    if kind == "open_url_documents" and obj["documents"]:
        return _short("Reading: " + "; ".join(doc["title"] or doc["url"] for doc in obj["documents"]))
    if kind == "intermediate_report_cited_docs":
        return f"Done: a lane cited {len(obj['documents'])} sources"
    if kind == "progress":
        return f"{obj['processed_tasks']} of {obj['total_tasks']} research tasks done"
    if kind == "message_start" and obj["final_documents"]:
        return "Writing the report"
    if kind == "degraded":
        return _short(f"Note: {obj['detail']}")
    return None


def _short(line: str) -> str:
    line = " ".join(line.split())
    return line if len(line) <= MAX_LINE_CHARS else line[: MAX_LINE_CHARS - 1].rsplit(" ", 1)[0] + "…"


def _document(question: str, report: dict[str, Any]) -> str:
    """The report as its `.md` export reads: title, summary, key findings, the report, its sources."""
    return document_markdown(
        question=question,
        title=report["title"],
        summary=report["summary"],
        key_findings=[KeyFinding.model_validate(f) for f in report["key_findings"]],
        markdown=report["markdown"],
        sources=[NumberedSource.model_validate(s) for s in report["sources"]],
    )

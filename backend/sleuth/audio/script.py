"""What is spoken: the report read aloud (narration), or an overview or dialogue written by the report model."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from sleuth.config import Settings
from sleuth.core import heavy
from sleuth.core.clock import SystemClock
from sleuth.core.markdown import rewrite_citations, rewrite_images
from sleuth.llm.gateway import LLMError, LLMGateway
from sleuth.llm.prompting import render, tool_schema
from sleuth.stream.results import ResearchResult

Style = Literal["narration", "overview", "dialogue"]
STYLES: tuple[Style, ...] = ("narration", "overview", "dialogue")
MAX_LINES = 40
MAX_LINE_CHARS = 1200
_ESCAPED = re.compile(r"\\([!-/:-@\[-`{-~])")  # markdown's backslash escapes of ASCII punctuation
# Spoken last when a script was longer than SLEUTH_AUDIO_MAX_SCRIPT_CHARS: the one wording of that note.
CUT_NOTE = "The audio ends here because the report is longer than the audio limit; the rest is in the written report."


@dataclass(frozen=True)
class Line:
    speaker: int  # 0 or 1; a single-voice script uses only 0
    text: str


class ScriptError(Exception):
    """No script could be written; the message is safe to show."""


RECORD_OVERVIEW = "record_overview"
RECORD_DIALOGUE = "record_dialogue"


def record_script(*, dialogue: bool) -> dict[str, Any]:
    """A spoken script as lines; a dialogue's lines alternate between speakers 0 and 1."""
    line = {
        "type": "object",
        "properties": {
            "speaker": {"type": "integer", "enum": [0, 1] if dialogue else [0]},
            "text": {"type": "string"},
        },
        "required": ["speaker", "text"],
    }
    name = RECORD_DIALOGUE if dialogue else RECORD_OVERVIEW
    return tool_schema(
        name, {"lines": {"type": "array", "items": line, "description": render(f"tools/{name}_lines")}}, ["lines"]
    )


def _spoken(text: str) -> str:
    """Text as it is read: images by their alt text, no citation markers, no markdown marks, single spaces."""
    text = _ESCAPED.sub(r"\1", rewrite_images(text, lambda alt, _url: alt))
    text = rewrite_citations(text, lambda _n: None)
    return " ".join(re.sub(r"[`*_#>|]+", " ", text).split())


def narration(report: ResearchResult) -> list[Line]:
    """The report read from the top: title, summary, then the body's headings, paragraphs and list items.

    Code blocks, tables, the method note and the sources list are not read.
    """
    body = report.markdown.split("\n## How this report was made")[0]
    lines = [Line(0, _spoken(part)) for part in (report.title, report.summary) if part.strip()]
    tokens = heavy.MarkdownIt("commonmark").enable("table").parse(body)
    in_table = False
    for token in tokens:
        if token.type == "table_open":
            in_table = True
        elif token.type == "table_close":
            in_table = False
        elif token.type == "inline" and not in_table:
            spoken = _spoken(token.content)
            if spoken:
                lines.append(Line(0, spoken))
    return [line for line in lines if line.text]


def _clean(raw: object, speakers: int) -> list[Line]:
    if not isinstance(raw, list):
        return []
    lines = []
    for item in raw[:MAX_LINES]:
        if isinstance(item, dict):
            speaker = item.get("speaker")
            text = _spoken(str(item.get("text") or ""))[:MAX_LINE_CHARS]
            if text:
                lines.append(Line(speaker if isinstance(speaker, int) and 0 <= speaker < speakers else 0, text))
    return lines


async def written_script(settings: Settings, report: ResearchResult, style: Style) -> list[Line]:
    """An overview (one voice) or a dialogue (two voices), written by the report model through one tool call."""
    tool = record_script(dialogue=style == "dialogue")
    messages = [
        {"role": "system", "content": render(f"audio_{style}")},
        {
            "role": "user",
            "content": render(
                "audio_user",
                question=report.question,
                title=report.title,
                summary=report.summary,
                key_findings=report.key_findings,
                markdown=report.markdown.split("\n## How this report was made")[0],
            ),
        },
    ]
    try:
        result = await LLMGateway(settings, SystemClock()).complete(
            "report", messages, tools=[tool], tool_choice="required"
        )
    except LLMError as exc:
        raise ScriptError(f"the report model could not write the {style} script ({exc})") from None
    call = next((c for c in result.tool_calls if c.ok and c.parsed is not None), None)
    lines = _clean((call.parsed or {}).get("lines") if call else None, 2 if style == "dialogue" else 1)
    if not lines:
        raise ScriptError(f"the report model wrote no {style} script")
    return lines


def _cut(text: str, limit: int) -> str:
    """At most `limit` characters of `text`, ending at its last sentence end in them, else at a word end."""
    head = text[: limit + 1]  # one more: a sentence or word that ends exactly at the limit is kept
    sentence_end = max(head.rfind(mark) for mark in (". ", "! ", "? "))
    if sentence_end > 0:
        return head[: sentence_end + 1]
    word_end = head.rfind(" ")
    return head[:word_end].rstrip() if word_end > 0 else ""


def capped(lines: list[Line], max_chars: int) -> list[Line]:
    """The script up to `max_chars` spoken characters; a longer one is cut there and ends with `CUT_NOTE`."""
    kept: list[Line] = []
    left = max_chars
    for line in lines:
        if len(line.text) <= left:
            kept.append(line)
            left -= len(line.text)
            continue
        part = _cut(line.text, left)
        if part:
            kept.append(Line(line.speaker, part))
        kept.append(Line(0, CUT_NOTE))
        break
    return kept


async def script_for(settings: Settings, report: ResearchResult, style: Style) -> list[Line]:
    """What is spoken in `style`, capped at `settings.audio_max_script_chars`."""
    lines = narration(report) if style == "narration" else await written_script(settings, report, style)
    return capped(lines, settings.audio_max_script_chars)

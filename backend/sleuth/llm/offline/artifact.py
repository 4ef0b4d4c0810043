"""The offline model's `record_artifact` answer: a title, summary and key findings copied from the
findings the report is written from.

Extractive like the rest of this model: the title is the question (or the findings' first heading),
the summary the findings' opening sentences, and each key finding a cited sentence of the findings
with the citations it carries. Nothing is written that the findings do not say. It reads the facts
block and the tagged findings, never the prose around them.
"""

from __future__ import annotations

import re

from sleuth.core.markdown import sentences
from sleuth.core.text import ELLIPSIS, shorten
from sleuth.llm.offline.planner import clauses
from sleuth.llm.offline.request import OfflineRequest, Reply
from sleuth.llm.offline.text import (
    CitedUnit,
    announces_what_was_dropped,
    cited_units,
    is_dangling,
    jaccard,
    normalise_space,
    overlap,
    term_set,
)
from sleuth.llm.prompt_facts import ArtifactFacts, read_tagged

TITLE_CHARS = 120  # the engine's limit for a title: a question that fits stays whole
SUMMARY_UNITS = 3
MAX_FINDINGS = 5
DUPLICATE_JACCARD = 0.5

_HEADING = re.compile(r"^#{1,3}\s+(.+)$", re.M)


def _title(question: str, report: str) -> str:
    """The question itself names the report best; a heading only stands in when there is no question.

    A longer question gives its first sub-question when that fits, else its words up to a word
    boundary; either way an ellipsis says more was asked. Never a phrase cut off in the middle
    ("methods, and")."""
    heading = _HEADING.search(report)
    base = normalise_space(question or (heading.group(1) if heading else "")).rstrip("?.!")
    if len(base) > TITLE_CHARS:
        first = (clauses(base) or [""])[0].rstrip("?")
        base = f"{first}{ELLIPSIS}" if 0 < len(first) < TITLE_CHARS else shorten(base, TITLE_CHARS)
    return base[:1].upper() + base[1:]


def _distinct(units: list[CitedUnit], limit: int) -> list[CitedUnit]:
    picked: list[CitedUnit] = []
    for unit in units:
        terms = term_set(unit.bare)
        if all(jaccard(terms, term_set(other.bare)) < DUPLICATE_JACCARD for other in picked):
            picked.append(unit)
        if len(picked) >= limit:
            break
    return picked


def record_artifact(request: OfflineRequest) -> Reply:
    text = request.last_user
    facts = request.facts(ArtifactFacts)
    question = facts.question if facts is not None else ""
    bodies = [body for _, body in read_tagged(text, "finding")]
    body = "\n\n".join(bodies) if bodies else text  # not a Sleuth prompt: the user's text is the material
    # A passage an agent quoted under one citation gives its sentences one by one: the report's body
    # may hold one of them, and a summary or finding must not say it again. A sentence whose list or
    # code was not copied says nothing as a summary or a key finding.
    units = [
        CitedUnit(text=sentence, bare=sentence, numbers=unit.numbers)
        for unit in cited_units(body)
        for sentence in sentences(unit.bare)  # as a reader's sentences are told apart
    ]
    units = [unit for unit in units if not announces_what_was_dropped(unit)]
    summary_units = _distinct(units, SUMMARY_UNITS)
    question_terms = term_set(question)
    # Key findings: self-contained sentences closest to the question first.
    ranked = sorted(
        enumerate(units),
        key=lambda item: (is_dangling(item[1].bare), -overlap(term_set(item[1].bare), question_terms), item[0]),
    )
    findings = _distinct([unit for _, unit in ranked], MAX_FINDINGS)
    summary = " ".join(unit.bare for unit in summary_units[: max(2, min(SUMMARY_UNITS, len(summary_units)))])
    arguments = {
        "title": _title(question, body),
        "summary": summary,
        "key_findings": [{"text": unit.bare, "citations": unit.numbers} for unit in findings],
    }
    return Reply(tool_calls=[("record_artifact", arguments)])

"""The report as an artifact: title, summary and key findings, recorded by the report model in one tool call.

The call is asked from the findings the report is written from, while the report streams: asked of
the finished report, it would add a whole model call to every run after its last token. The
findings carry the numbers the report was given; once the report's citations are verified and
renumbered, the artifact's follow that renumbering (`VerifiedReport.numbers`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from sleuth.core.clock import DeadlineReached, run_until
from sleuth.core.markdown import cited_numbers, prose_sentences, rewrite_citations, sentence_key
from sleuth.core.text import shorten
from sleuth.llm.gateway import LLMError
from sleuth.llm.prompting import render
from sleuth.research import tool_schemas as ts
from sleuth.research.report.citations import VerifiedReport
from sleuth.research.report.relevance import opens_with_a_cited_answer
from sleuth.research.state import Finding, RunState
from sleuth.research.step import llm_step
from sleuth.stream.packets import KeyFinding, NumberedSource

TITLE_MAX_CHARS = 120
SUMMARY_MAX_SENTENCES = 4
SUMMARY_MAX_CHARS = 900
FINDINGS_MAX = 7
FINDING_MAX_CHARS = 400
ARTIFACT_MAX_TOKENS = 1024

_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+")


@dataclass
class Artifact:
    title: str
    summary: str
    key_findings: list[KeyFinding] = field(default_factory=list)


def _without_markers(text: str) -> str:
    return " ".join(rewrite_citations(text, lambda _n: None).split())


def fallback_artifact(question: str, markdown: str) -> Artifact:
    """What can be said without a model: an opening heading or the question as title.

    No summary: the report's own first paragraph opens it already, and a copy above it would be read
    twice. No key findings: choosing them is judgement, and inventing them here would pass a guess
    off as the model's.
    """
    heading = re.match(r"\s*#{1,2}\s+(.+)$", markdown, re.M)  # a section heading further down names less
    title = heading.group(1).strip() if heading else question
    return Artifact(title=report_title(title), summary="")


def report_title(text: str) -> str:
    """A title on one line, whole or shortened at a word boundary with an ellipsis (core/text.py)."""
    return shorten(text, TITLE_MAX_CHARS)


def _limit_sentences(text: str) -> str:
    sentences = [s for s in _SENTENCE_END.split(text.strip()) if s]
    return shorten(" ".join(sentences[:SUMMARY_MAX_SENTENCES]), SUMMARY_MAX_CHARS)


def _finding(raw: object, renumber: dict[int, int]) -> KeyFinding | None:
    """A key finding with its citations in the report's numbering; None when the report cites none
    of its sources: shown above the report, it must be backed by a source the reader can open."""
    if not isinstance(raw, dict):
        return None
    text = str(raw.get("text") or "")
    numbers = [n for n in raw.get("citations") or [] if isinstance(n, int) and not isinstance(n, bool)]
    numbers += cited_numbers(text)  # markers written into the text count too
    bare = _without_markers(text)
    kept = sorted({renumber[n] for n in numbers if n in renumber})
    if not bare or not kept:
        return None
    return KeyFinding(text=shorten(bare, FINDING_MAX_CHARS), citations=kept)


def clean_artifact(arguments: dict[str, Any], renumber: dict[int, int], fallback: Artifact) -> Artifact:
    """The model's call, held to the artifact's shape. `renumber` maps each number the model was given
    to the report's own; a citation of a source the report does not cite is dropped, and so is a key
    finding left with none."""
    title = report_title(" ".join(str(arguments.get("title") or "").split()).rstrip("."))
    summary = _limit_sentences(_without_markers(str(arguments.get("summary") or "")))
    raw_findings = arguments.get("key_findings")
    findings = (
        [f for raw in raw_findings or [] if (f := _finding(raw, renumber))] if isinstance(raw_findings, list) else []
    )
    return Artifact(
        title=title or fallback.title, summary=summary or fallback.summary, key_findings=findings[:FINDINGS_MAX]
    )


def without_repeats(artifact: Artifact, markdown: str) -> Artifact:
    """The artifact without what the report's body already says word for word.

    Readers meet the title, summary and key findings above the body, in every client and export; a
    summary copied from the body's first paragraph, or a finding copied from a section, would be read
    twice. So a summary sentence the body holds is dropped, and so is a key finding whose every
    sentence the body or the summary holds (an extractive model's artifact can end up empty).
    """
    seen = {sentence_key(sentence) for sentence in prose_sentences(markdown)}
    kept: list[str] = []
    for sentence in prose_sentences(artifact.summary):
        key = sentence_key(sentence)
        if key and key not in seen:
            kept.append(sentence)
            seen.add(key)
    findings: list[KeyFinding] = []
    for finding in artifact.key_findings:
        keys = {sentence_key(sentence) for sentence in prose_sentences(finding.text)} - {""}
        if keys and not keys <= seen:
            findings.append(finding)
            seen |= keys
    return Artifact(title=artifact.title, summary=" ".join(kept), key_findings=findings)


async def describe_findings(
    state: RunState, findings: list[Finding], sources: list[NumberedSource], until: float
) -> dict[str, Any] | None:
    """Ask the report model for the artifact's fields from the report's own material (the findings and
    their numbered sources); None when there is nothing to describe, on a failure, or once `until`
    passes: the report then carries the fallback."""
    if not findings:
        return None
    messages = [
        {"role": "system", "content": render("artifact", today=state.today)},
        {
            "role": "user",
            "content": render(
                "artifact_user",
                question=state.request.question,
                clarification=state.request.clarification,
                findings=findings,
                sources=sources,
            ),
        },
    ]
    try:
        result = await run_until(
            state.clock,
            until,
            llm_step(
                state,
                "report",
                messages,
                tools=[ts.record_artifact()],
                tool_choice="required",
                max_tokens=ARTIFACT_MAX_TOKENS,
            ),
        )
    except (DeadlineReached, LLMError):
        return None
    call = next((c for c in result.tool_calls if c.ok and c.resolved_name == ts.RECORD_ARTIFACT), None)
    return call.parsed if call is not None else None


def reconcile(recorded: dict[str, Any] | None, question: str, verified: VerifiedReport) -> Artifact:
    """The artifact of the verified report: the model's, renumbered as the report's citations were and
    without what the report's body already says; or the fallback when the model recorded none.

    A report whose first paragraph cites nothing does not answer from its sources (the offline model
    opens such a report by saying so): a summary or key findings above it would present as the
    answer what the report says does not answer, so it has neither; its body says what the sources
    do say. (An opening whose citation the claim check flagged did try to answer: the method note's
    confidence says what the check found.)"""
    fallback = fallback_artifact(question, verified.markdown)
    artifact = fallback if recorded is None else clean_artifact(recorded, verified.numbers, fallback)
    if opens_with_a_cited_answer(verified.markdown) is False:
        artifact = replace(artifact, summary="", key_findings=[])
    return without_repeats(artifact, verified.markdown)

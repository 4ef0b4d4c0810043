"""The method note at the end of every report: the run's own counts, and a confidence derived from
measured signals, with its reason in one line.

The signals: how much of the question, and of each plan step, the report's cited sentences that the
claim check did not flag cover; how many of those sentences come from sources titled for what the
question asks about, and whether a page titled closer to the question was found but not cited; how
many claims were flagged; which plan steps found nothing; whether the first paragraph answers from a
cited sentence that passed the check. No model writes
any of it, so it cannot overstate what the research did.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from sleuth.llm.prompting import render
from sleuth.research.report.citations import VerifiedReport
from sleuth.research.report.relevance import (
    Coverage,
    checked_claims,
    coverage,
    on_subject_share,
    opens_with_a_cited_answer,
    step_coverage,
    uncited_subject_title,
)
from sleuth.research.state import Finding, RunState, RunTally
from sleuth.stream.packets import MethodNote

Confidence = Literal["high", "medium", "low"]
# Degradations after which the report may be missing whole parts of the research.
SEVERE = {"deadline", "report_timeout", "orchestrator_force_report", "agent_hard_timeout"}
# A plan nobody reviewed in time still runs in full: named in the note, no cost to confidence.
# An MCP server that could not be used: the run researched with the rest, as it would without it.
HARMLESS = {"plan_review_timeout", "tool_unavailable"}
# Shares of the question's subject words the checked cited sentences contain: below the first the
# report is about something else, below the second it leaves part of the question unaddressed.
OFF_TOPIC_SHARE = 0.34
PARTLY_ANSWERED_SHARE = 0.5
# A plan step is covered when its agents cited something and the checked cited sentences hold
# this share of its subject words.
STEP_COVERED_SHARE = 0.5
# Flagged claims, as a share of the checked ones, that make the whole report doubtful.
UNSUPPORTED_SHARE = 0.25
# Checked cited sentences from sources titled for the question's subject, as a share: below this the
# report rests on pages about something else.
ON_SUBJECT_SHARE = 0.3


@dataclass(frozen=True)
class StepSignal:
    found_nothing: bool  # no agent that served the step cited anything
    coverage: Coverage | None  # of the step's subject by the checked cited sentences; None: nothing to measure

    @property
    def covered(self) -> bool:
        if self.found_nothing:
            return False
        return self.coverage is None or self.coverage.share >= STEP_COVERED_SHARE


@dataclass(frozen=True)
class Counts:
    sources_found: int
    sources_read: int
    sources_cited: int
    citations_removed: int
    claims_unsupported: int
    max_cycles: int
    time_budget_s: float
    elapsed_s: float
    claims_checked: int = 0
    question: Coverage | None = None  # of the question by the checked cited sentences; None: not measured
    steps: tuple[StepSignal, ...] = field(default_factory=tuple)
    on_subject: float | None = None  # share of checked cited sentences from sources titled for the subject
    uncited_subject: str | None = None  # a page found but not cited, titled closer to the question than any cited
    opening_cited: bool | None = None  # whether the first paragraph holds a checked cited sentence

    @property
    def off_subject(self) -> bool:
        return self.on_subject is not None and self.on_subject < ON_SUBJECT_SHARE

    @property
    def steps_covered(self) -> int:
        return sum(1 for step in self.steps if step.covered)

    @property
    def empty_steps(self) -> list[int]:
        """The 1-based plan steps whose agents found nothing."""
        return [number for number, step in enumerate(self.steps, 1) if step.found_nothing]

    @property
    def uncovered_steps(self) -> list[int]:
        return [number for number, step in enumerate(self.steps, 1) if not step.covered]


def _off_topic(question: Coverage | None) -> bool:
    """The cited passages are about something else: none names what the question names, or they
    share too few of its subject words."""
    if question is None:
        return False
    return (question.names_asked > 0 and question.names_found == 0) or question.share < OFF_TOPIC_SHARE


def confidence(counts: Counts, tally: RunTally) -> tuple[Confidence, str]:
    """(level, reason code). The template words the reason; the rule lives here only."""
    if counts.sources_cited == 0:
        return "low", "no_sources"
    if SEVERE & set(tally.degraded):
        return "low", "cut_short"
    if counts.claims_unsupported and counts.claims_unsupported >= UNSUPPORTED_SHARE * max(1, counts.claims_checked):
        return "low", "unsupported"
    if _off_topic(counts.question):
        return "low", "off_topic"
    if counts.steps and counts.steps_covered * 2 < len(counts.steps):
        return "low", "steps_uncovered"
    question = counts.question
    partly = question is not None and (
        question.share < PARTLY_ANSWERED_SHARE or question.names_found < question.names_asked
    )
    if counts.off_subject and partly:
        return "low", "off_subject"
    # a report that opens by saying its sources do not answer directly gives that as its reason
    if counts.opening_cited is False:
        return "medium", "opening_uncited"
    if counts.off_subject:
        return "medium", "off_subject"
    if counts.uncited_subject:
        return "medium", "subject_page_uncited"
    if set(tally.degraded) - HARMLESS:
        return "medium", "degraded"
    if counts.citations_removed or counts.claims_unsupported:
        return "medium", "removed"
    if partly:
        return "medium", "partly_answered"
    if counts.uncovered_steps:
        return "medium", "step_uncovered"
    return "high", "well_sourced"


def step_signals(plan: list[str], findings: list[Finding], sentences: list[str]) -> tuple[StepSignal, ...]:
    """Per plan step: whether its agents found anything, and how much of it the sentences cover."""
    signals = []
    for number, step in enumerate(plan, 1):
        served = [finding for finding in findings if finding.plan_step == number]
        signals.append(
            StepSignal(found_nothing=not any(f.cited for f in served), coverage=step_coverage(step, sentences))
        )
    return tuple(signals)


def method_note(counts: Counts, tally: RunTally) -> MethodNote:
    level, reason = confidence(counts, tally)
    values = {
        "sources_found": counts.sources_found,
        "sources_read": counts.sources_read,
        "blocked_credibility": tally.blocked_credibility,
        "blocked_ssrf": tally.blocked_ssrf,
        "failed_reads": tally.failed_reads,
        "sources_cited": counts.sources_cited,
        "citations_removed": counts.citations_removed,
        "claims_checked": counts.claims_checked,
        "claims_unsupported": counts.claims_unsupported,
        "cycles_used": tally.cycles_used,
        "max_cycles": counts.max_cycles,
        "time_budget_s": round(counts.time_budget_s, 1),
        "elapsed_s": round(counts.elapsed_s, 1),
        "degraded": list(dict.fromkeys(tally.degraded)),
        "question_coverage": None if counts.question is None else round(counts.question.share, 3),
        "on_subject_share": None if counts.on_subject is None else round(counts.on_subject, 3),
        "uncited_subject_title": counts.uncited_subject,
        "opening_cited": counts.opening_cited,
        "steps_planned": len(counts.steps),
        "steps_covered": counts.steps_covered,
        "steps_empty": counts.empty_steps,
    }
    question = counts.question
    line = render(
        "responses/confidence_reason",
        reason=reason,
        names_missing=0 if question is None else question.names_asked - question.names_found,
        uncovered_steps=counts.uncovered_steps,
        **values,
    ).strip()
    text = render("responses/method_note", confidence=level, reason_line=line, **values).strip()
    # `values` mixes the note's field types in one dict, which mypy cannot match field by field.
    return MethodNote(confidence=level, confidence_reason=line, text=text, **values)  # type: ignore[arg-type]


def note_for(state: RunState, verified: VerifiedReport, *, claims_unsupported: int = 0) -> MethodNote:
    """The run's method note, read from the run state when the report is published."""
    claims = checked_claims(verified.markdown, verified.claims)
    sentences = [claim.sentence for claim in claims]
    titles = {source.number: source.title for source in verified.sources}
    counts = Counts(
        sources_found=state.registry.seen,
        sources_read=state.registry.fetched,
        sources_cited=len(verified.sources),
        citations_removed=len(verified.removed),
        claims_unsupported=claims_unsupported,
        claims_checked=len(verified.claims),
        max_cycles=state.max_cycles,
        time_budget_s=state.deadlines.time_budget_s,
        # `started_at` moves past time spent waiting for the user, so this is research time only
        elapsed_s=max(0.0, state.clock.now() - state.deadlines.started_at),
        question=coverage(state.request.question, sentences),
        steps=step_signals(state.plan, state.findings, sentences),
        on_subject=on_subject_share(state.request.question, claims, titles, state.registry.titles),
        uncited_subject=uncited_subject_title(
            state.request.question, [source.title for source in verified.sources], state.registry.titles
        ),
        opening_cited=opens_with_a_cited_answer(verified.markdown, verified.claims),
    )
    return method_note(counts, state.tally)

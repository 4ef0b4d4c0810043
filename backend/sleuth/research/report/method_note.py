"""The method note at the end of every report: the run's own counts, and a confidence derived from them
and from how much of the question the cited passages address.

No model writes any of it, so it cannot overstate what the research did.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from sleuth.llm.prompting import render
from sleuth.research.report.relevance import QuestionCoverage
from sleuth.research.state import RunTally
from sleuth.stream.packets import MethodNote

Confidence = Literal["high", "medium", "low"]
# Degradations after which the report may be missing whole parts of the research.
SEVERE = {"deadline", "report_timeout", "orchestrator_force_report", "agent_hard_timeout"}
# A plan nobody reviewed in time still runs in full: named in the note, no cost to confidence.
HARMLESS = {"plan_review_timeout"}
# Shares of the question's subject words the cited sentences contain: below the first the report
# is about something else, below the second it leaves much of the question unaddressed.
OFF_TOPIC_SHARE = 0.34
PARTLY_ANSWERED_SHARE = 0.5


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
    coverage: QuestionCoverage | None = None  # of the question by the cited sentences; None: not measured


def _off_topic(coverage: QuestionCoverage | None) -> bool:
    """The cited passages are about something else: none names what the question names, or they
    share too few of its subject words."""
    if coverage is None:
        return False
    return (coverage.names_asked > 0 and coverage.names_found == 0) or coverage.share < OFF_TOPIC_SHARE


def confidence(counts: Counts, tally: RunTally) -> tuple[Confidence, str]:
    """(level, reason code). The template words the reason; the rule lives here only."""
    if counts.sources_cited == 0:
        return "low", "no_sources"
    if SEVERE & set(tally.degraded):
        return "low", "cut_short"
    if counts.claims_unsupported > 0 and counts.claims_unsupported * 3 >= counts.sources_cited:
        return "low", "unsupported"
    if _off_topic(counts.coverage):
        return "low", "off_topic"
    if counts.sources_cited < 3:
        return "medium", "few_sources"
    if set(tally.degraded) - HARMLESS:
        return "medium", "degraded"
    if counts.citations_removed or counts.claims_unsupported:
        return "medium", "removed"
    if counts.coverage is not None and counts.coverage.share < PARTLY_ANSWERED_SHARE:
        return "medium", "partly_answered"
    return "high", "well_sourced"


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
        "claims_unsupported": counts.claims_unsupported,
        "cycles_used": tally.cycles_used,
        "max_cycles": counts.max_cycles,
        "time_budget_s": round(counts.time_budget_s, 1),
        "elapsed_s": round(counts.elapsed_s, 1),
        "degraded": list(dict.fromkeys(tally.degraded)),
    }
    text = render("responses/method_note", confidence=level, reason=reason, **values).strip()
    return MethodNote(confidence=level, confidence_reason=reason, text=text, **values)  # type: ignore[arg-type]

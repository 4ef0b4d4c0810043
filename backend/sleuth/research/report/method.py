"""The run's counts for its method note, read from the run state when the report is published."""

from __future__ import annotations

from sleuth.research.report.citations import VerifiedReport
from sleuth.research.report.method_note import Counts, method_note
from sleuth.research.report.relevance import question_coverage
from sleuth.research.state import RunState
from sleuth.stream.packets import MethodNote


def note_for(state: RunState, verified: VerifiedReport, *, claims_unsupported: int = 0) -> MethodNote:
    counts = Counts(
        sources_found=state.registry.seen,
        sources_read=state.registry.fetched,
        sources_cited=len(verified.sources),
        citations_removed=len(verified.removed),
        claims_unsupported=claims_unsupported,
        max_cycles=state.max_cycles,
        time_budget_s=state.deadlines.time_budget_s,
        # `started_at` moves past time spent waiting for the user, so this is research time only
        elapsed_s=max(0.0, state.clock.now() - state.deadlines.started_at),
        coverage=question_coverage(state.request.question, verified.markdown),
    )
    return method_note(counts, state.tally)

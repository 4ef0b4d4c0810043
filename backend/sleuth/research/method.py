"""The run's counts for its method note, read from the run state when the report is published."""

from __future__ import annotations

from sleuth.research.citations import VerifiedReport
from sleuth.research.method_note import Counts, method_note
from sleuth.research.state import RunState
from sleuth.stream.packets import MethodNote


def time_limit_s(state: RunState) -> float:
    """The run's effective time limit: what its hard deadline allows from the start."""
    return state.deadlines.deadline_at - state.deadlines.started_at - state.waited_s


def note_for(state: RunState, verified: VerifiedReport, *, claims_unsupported: int = 0) -> MethodNote:
    counts = Counts(
        sources_found=state.registry.seen,
        sources_read=state.registry.fetched,
        sources_cited=len(verified.sources),
        citations_removed=len(verified.removed),
        claims_unsupported=claims_unsupported,
        max_cycles=state.max_cycles,
        time_budget_s=time_limit_s(state),
        elapsed_s=max(0.0, state.clock.now() - state.deadlines.started_at - state.waited_s),
    )
    return method_note(counts, state.tally)

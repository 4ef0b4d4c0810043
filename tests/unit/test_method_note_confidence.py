"""The confidence rule: which degradations cost confidence and which are only named."""

from __future__ import annotations

from sleuth.research.method_note import Counts, RunTally, confidence

WELL_SOURCED = Counts(
    sources_found=12,
    sources_read=6,
    sources_cited=5,
    citations_removed=0,
    claims_unsupported=0,
    max_cycles=8,
    time_budget_s=600,
    elapsed_s=40,
)


def test_an_unreviewed_plan_costs_no_confidence_but_a_stopped_agent_does() -> None:
    assert confidence(WELL_SOURCED, RunTally(degraded=["plan_review_timeout"])) == ("high", "well_sourced")
    stopped = RunTally(degraded=["plan_review_timeout", "agent_force_report"])
    assert confidence(WELL_SOURCED, stopped) == ("medium", "degraded")
    assert confidence(WELL_SOURCED, RunTally(degraded=["deadline"])) == ("low", "cut_short")

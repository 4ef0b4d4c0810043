"""Claim-support checking in the engine: the report packet, the summary and the judge model."""

from __future__ import annotations

from typing import Any

from sleuth.core.markdown import CITATION_REMOVED
from sleuth.research.report.claims import LOST, NO_CITATION
from sleuth.stream.results import ResearchRequest
from sleuth_testkit.engine import run_engine, scripted_settings
from sleuth_testkit.model import Reply, ScriptedLLM, classify, tool_names
from sleuth_testkit.scenarios import RequestGate
from support.claims_model import SUPPORTED, ClaimsModel
from support.invariants import check_invariants

QUESTION = "How does the with statement use a context manager?"


def request() -> ResearchRequest:
    return ResearchRequest(question=QUESTION, clarify=False)


async def test_the_report_packet_lists_unsupported_claims_and_the_summary_counts_them() -> None:
    with ScriptedLLM(ClaimsModel()) as llm:
        run = await run_engine(scripted_settings(llm), request())
    check_invariants(run.packets)
    (report,) = run.of("report")
    claims = report.obj.unsupported_claims  # type: ignore[union-attr]
    # The second `[1]` of the report: a client marks that chip, not the first one.
    assert [(c.marker, c.occurrence, c.sentence) for c in claims] == [
        ("[1]", 2, "The moon is made of green cheese and orbits Mars every 3 days.")
    ]
    # The cited page's numbered list ("1." … ) does not make the sentence's 3 look supported.
    assert claims[0].reason == "the cited passage does not contain the number 3"
    (summary,) = run.of("summary")
    assert (summary.obj.claims_checked, summary.obj.claims_unsupported) == (2, 1)  # type: ignore[union-attr]
    assert [c.checker for c in run.result.claims] == ["overlap", "overlap"]


async def test_a_configured_judge_model_gives_the_verdicts() -> None:
    with ScriptedLLM(ClaimsModel()) as llm:
        run = await run_engine(scripted_settings(llm, judge_model="openai/judge-model"), request())
        judged = [body for body in llm.requests if tool_names(body) == {"claim_verdicts"}]
    assert len(judged) == 1 and judged[0]["model"] == "judge-model"
    # The judge sees each sentence with the passage of the cited page that matches it best.
    prompt = judged[0]["messages"][-1]["content"]
    assert "(see section With Statement Context Managers)" in prompt  # page text, not in the sentence
    (report,) = run.of("report")
    assert [(c.marker, c.reason) for c in report.obj.unsupported_claims] == [  # type: ignore[union-attr]
        ("[1]", "the page never mentions the moon")
    ]
    assert {c.checker for c in run.result.claims} == {"judge"}
    assert run.of("run_start")[0].obj.models["judge"] == "openai/judge-model"  # type: ignore[union-attr]
    assert any(p.obj.type == "usage" and p.obj.role == "judge" for p in run.packets)  # type: ignore[union-attr]


class JudgeHeldForTheArtifact(ClaimsModel):
    """Answers the judge only once the artifact's request has arrived, or after `patience_s` if it never
    comes while the judge waits (a report whose claims must be judged before its artifact is asked for)."""

    def __init__(self, patience_s: float) -> None:
        super().__init__()
        self.gate = RequestGate(patience_s)

    def __call__(self, body: dict[str, Any]) -> Reply:
        names = tool_names(body)
        if names == {"record_artifact"}:
            self.gate.asked.set()
        reply = super().__call__(body)
        return self.gate.hold(reply) if names == {"claim_verdicts"} else reply


async def test_the_artifact_is_asked_for_while_the_judge_checks_the_claims() -> None:
    model = JudgeHeldForTheArtifact(patience_s=20)
    try:
        with ScriptedLLM(model) as llm:
            run = await run_engine(scripted_settings(llm, judge_model="openai/judge-model"), request())
    finally:
        model.gate.cancel()
    assert not model.gate.gave_up.is_set(), "the artifact's call waited for the judge's verdicts"
    assert run.stop_reason == "completed"
    assert {c.checker for c in run.result.claims} == {"judge"}
    (report,) = run.of("report")
    assert report.obj.title and report.obj.key_findings  # type: ignore[union-attr]  # the model's artifact, not the fallback


class ReportUsageHeldForTheJudge(ClaimsModel):
    """Sends the final report's text and finish reason, then holds its usage chunk until the judge's
    request has arrived, or for `patience_s` if it never comes while the usage is held (claims
    checked only once the report's model call has returned with its usage)."""

    def __init__(self, patience_s: float) -> None:
        super().__init__()
        self.gate = RequestGate(patience_s)

    def __call__(self, body: dict[str, Any]) -> Reply:
        reply = super().__call__(body)
        if tool_names(body) == {"claim_verdicts"}:  # the judge's request, which `classify` takes for a report
            self.gate.asked.set()
            return reply
        return self.gate.hold_usage(reply) if classify(body) == "report" else reply


async def test_the_claims_are_checked_while_the_reports_usage_is_on_its_way() -> None:
    model = ReportUsageHeldForTheJudge(patience_s=20)
    try:
        with ScriptedLLM(model) as llm:
            run = await run_engine(scripted_settings(llm, judge_model="openai/judge-model"), request())
    finally:
        model.gate.cancel()
    assert not model.gate.gave_up.is_set(), "the claim check waited for the report's usage"
    assert run.stop_reason == "completed"
    assert {c.checker for c in run.result.claims} == {"judge"}
    # the report's usage still counts (with the artifact's, on the report's model), before the report is published
    types = [p.obj.type for p in run.packets]
    usage = [i for i, p in enumerate(run.packets) if p.obj.type == "usage" and p.obj.role == "report"]  # type: ignore[union-attr]
    assert len(usage) == 2 and max(usage) < types.index("report")
    check_invariants(run.packets)


class BrokenJudge(ClaimsModel):
    def __call__(self, body: dict[str, Any]) -> Reply:
        if tool_names(body) == {"claim_verdicts"}:
            return Reply(status=401, error_message="bad key")
        return super().__call__(body)


async def test_a_failing_judge_falls_back_to_the_overlap_check() -> None:
    with ScriptedLLM(BrokenJudge()) as llm:
        run = await run_engine(scripted_settings(llm, judge_model="openai/judge-model"), request())
    assert run.stop_reason == "completed"
    assert [(c.checker, c.supported) for c in run.result.claims] == [("overlap", True), ("overlap", False)]
    (error,) = run.of("error")
    assert error.obj.recoverable and "word overlap" in error.obj.message  # type: ignore[union-attr]
    assert "sk-test-secret" not in error.obj.message  # type: ignore[union-attr]


class UncitedClaimsModel(ClaimsModel):
    """A report with a factual sentence that cites nothing and one whose only citation is made up."""

    def report(self, body: dict[str, Any]) -> Reply:
        return Reply(
            text=(
                f"{SUPPORTED}\n\n## Details\n\n"
                "The exception is suppressed when the __exit__() method returns a true value. "
                "The with statement was added to Python in version 2.5 [9]. "
                "The sections below explain each step in detail."
            )
        )


async def test_uncited_facts_and_removed_citations_are_marked_in_the_report_and_flagged() -> None:
    with ScriptedLLM(UncitedClaimsModel()) as llm:
        run = await run_engine(scripted_settings(llm), request())
        report_prompt = llm.requests_for("report")[0]["messages"][0]["content"]
    check_invariants(run.packets)
    assert "Every sentence that states a fact ends with its citation" in report_prompt
    (report,) = run.of("report")
    markdown = report.obj.markdown  # type: ignore[union-attr]
    assert f"in version 2.5 {CITATION_REMOVED}." in markdown
    flagged = [(c.marker, c.sentence, c.reason) for c in report.obj.unsupported_claims]  # type: ignore[union-attr]
    assert flagged == [
        ("", "The exception is suppressed when the __exit__() method returns a true value.", NO_CITATION),
        (CITATION_REMOVED, "The with statement was added to Python in version 2.5.", LOST),
    ]
    # The removed number is listed too, and the stored result carries the same verdicts.
    assert [r.marker for r in report.obj.removed_citations] == ["[9]"]  # type: ignore[union-attr]
    assert [(c.marker, c.reason) for c in run.result.unsupported_claims] == [(m, r) for m, _, r in flagged]

"""The report as an artifact: title, summary, key findings from the report model; the engine's method note."""

from __future__ import annotations

from typing import Any

import pytest

from sleuth.config import Settings
from sleuth.llm.offline import router
from sleuth.llm.offline.artifact import record_artifact
from sleuth.llm.offline.request import OfflineRequest
from sleuth.llm.offline.request import Reply as OfflineReply
from sleuth.stream.packets import Report
from sleuth.stream.results import ResearchRequest
from sleuth_testkit.engine import run_engine, scripted_settings
from sleuth_testkit.model import Reply, ScriptedLLM
from sleuth_testkit.scenarios import ResearchModel
from support.invariants import check_invariants

QUESTION = "How do Python descriptors and __getattr__ interact during attribute lookup?"


def _report(run: Any) -> Report:
    report = run.of("report")[0].obj
    assert isinstance(report, Report)
    return report


async def test_report_packet_carries_title_summary_and_checked_key_findings() -> None:
    with ScriptedLLM(ResearchModel()) as llm:
        run = await run_engine(scripted_settings(llm, clarify=False), QUESTION)
        artifact_requests = llm.requests_for("artifact")
    check_invariants(run.packets)
    report = _report(run)
    assert report.title == "Descriptors and __getattr__"
    # summary markers are stripped: the summary is prose, the citations live in the key findings; its
    # first sentence is the report's own first sentence, so it is read there and not twice
    assert report.summary == "It runs only when lookup fails."
    numbers = {s.number for s in report.sources}
    assert len(report.key_findings) == 4
    assert all(set(f.citations) <= numbers for f in report.key_findings)
    assert report.key_findings[-1].citations == []  # [99] is not in the report: dropped, not passed on
    # the model saw the verified report (its numbering) and was offered only record_artifact
    (request,) = artifact_requests
    assert [t["function"]["name"] for t in request["tools"]] == ["record_artifact"]
    assert report.markdown.split("\n\n## How this report was made")[0] in request["messages"][1]["content"]
    assert run.result.title == report.title and run.result.key_findings == report.key_findings


async def test_method_note_counts_are_the_runs_own() -> None:
    with ScriptedLLM(ResearchModel()) as llm:
        run = await run_engine(scripted_settings(llm, clarify=False), QUESTION)
        cycles = len(llm.requests_for("orchestrator"))
    report = _report(run)
    summary = run.of("summary")[0].obj
    method = report.method
    assert method is not None
    assert method.sources_found == summary.sources_seen
    assert method.sources_read == summary.sources_fetched
    assert method.sources_cited == summary.sources_cited == len(report.sources)
    assert method.citations_removed == len(report.removed_citations)
    assert method.cycles_used == cycles >= 2  # research cycles, then the one that asked for the report
    assert method.degraded == [p.obj.level for p in run.of("degraded")] == []
    assert method.time_budget_s == run.of("run_start")[0].obj.time_budget_s
    assert report.markdown.endswith(method.text)
    assert f"{method.sources_found} found, {method.sources_read} read, {method.sources_cited} cited" in method.text
    assert method.claims_unsupported == len(report.unsupported_claims)
    # sentences the claim checker flags lower the confidence; a clean run is high
    if report.unsupported_claims:
        assert method.confidence in ("medium", "low")
    else:
        assert method.confidence == "high"


class ArtifactRefused(ResearchModel):
    def artifact(self, body: dict[str, Any]) -> Reply:
        return Reply(text="I would rather not call a tool.")


class ForcedAgents(ResearchModel):
    """Agents run past their force-report time: the method note must say degradation fired."""

    def agent(self, body: dict[str, Any]) -> Reply:
        reply = super().agent(body)
        reply.delay_s = 0.3
        return reply


async def test_without_an_artifact_call_the_report_keeps_a_fallback_title_and_no_invented_findings() -> None:
    with ScriptedLLM(ArtifactRefused()) as llm:
        run = await run_engine(scripted_settings(llm, clarify=False), QUESTION)
    report = _report(run)
    assert run.stop_reason == "completed"
    assert report.title == QUESTION
    assert report.key_findings == []
    assert report.summary == ""  # the report's first paragraph opens it already; a copy would be read twice


async def test_degradation_lowers_the_confidence_and_is_named() -> None:
    with ScriptedLLM(ForcedAgents()) as llm:
        settings = scripted_settings(llm, clarify=False, agent_force_report_s=0.2, agent_report_grace_s=0)
        run = await run_engine(settings, QUESTION)
    method = _report(run).method
    assert method is not None
    assert "agent_force_report" in method.degraded
    assert method.degraded == list(dict.fromkeys(p.obj.level for p in run.of("degraded")))  # each level once
    assert method.confidence in ("medium", "low")
    assert "agent force report" in method.text


async def test_the_offline_model_records_an_artifact_from_the_report_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[dict[str, Any]] = []

    def recording(request: OfflineRequest) -> OfflineReply:
        reply = record_artifact(request)
        calls.append(reply.tool_calls[0][1])
        return reply

    monkeypatch.setitem(router.STEPS, "artifact", recording)
    run = await run_engine(Settings(clarify=False), ResearchRequest(question=QUESTION))
    report = _report(run)
    assert report.title == QUESTION.rstrip("?")
    # what the model recorded: sentences of the report, with the report's citations...
    (recorded,) = calls
    numbers = {s.number for s in report.sources}
    assert 3 <= len(recorded["key_findings"]) <= 7 and 2 <= recorded["summary"].count(". ") + 1 <= 4
    for finding in recorded["key_findings"]:
        assert finding["citations"] and set(finding["citations"]) <= numbers
        assert finding["text"].rstrip(".")[:60] in report.markdown  # extractive: copied from the report
    # ...which the report already says, so the published artifact does not say them again
    assert report.summary == "" and report.key_findings == []

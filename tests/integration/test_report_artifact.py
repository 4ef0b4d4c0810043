"""The report as an artifact: title, summary, key findings from the report model; the engine's method note."""

from __future__ import annotations

import re
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
from sleuth_testkit.model import Call, Reply, ScriptedLLM, user_text
from sleuth_testkit.scenarios import RequestGate, ResearchModel, sources_in
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
    # the finding citing [99], a number no source has, is dropped with its citation: nothing above
    # the report goes unbacked
    assert [f.text for f in report.key_findings] == [f"Finding backed by source {n}." for n in (1, 2, 3)]
    assert all(f.citations and set(f.citations) <= numbers for f in report.key_findings)
    # the model saw the findings the report is written from and was offered only record_artifact
    (request,) = artifact_requests
    assert [t["function"]["name"] for t in request["tools"]] == ["record_artifact"]
    assert "Finding 1 about the task" in request["messages"][1]["content"]
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


async def test_the_offline_model_records_an_artifact_from_the_findings(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[dict[str, Any]] = []

    def recording(request: OfflineRequest) -> OfflineReply:
        reply = record_artifact(request)
        calls.append(reply.tool_calls[0][1])
        return reply

    monkeypatch.setitem(router.STEPS, "artifact", recording)
    run = await run_engine(Settings(clarify=False), ResearchRequest(question=QUESTION))
    report = _report(run)
    assert report.title == QUESTION.rstrip("?")
    # what the model recorded: cited sentences of the findings, which the extractive report copies too...
    (recorded,) = calls
    assert 3 <= len(recorded["key_findings"]) <= 7 and 2 <= recorded["summary"].count(". ") + 1 <= 4
    for finding in recorded["key_findings"]:
        assert finding["citations"]
        assert finding["text"].rstrip(".")[:60] in report.markdown
    # ...so the report already says them, and the published artifact does not say them again
    assert report.summary == "" and report.key_findings == []


class ReportHeldForTheArtifact(ResearchModel):
    """Streams the final report only once the artifact's request has arrived, or after `patience_s` if
    it never comes while the report is written (an artifact asked of the finished report)."""

    def __init__(self, patience_s: float) -> None:
        super().__init__()
        self.gate = RequestGate(patience_s)

    def artifact(self, body: dict[str, Any]) -> Reply:
        self.gate.asked.set()
        return super().artifact(body)

    def report(self, body: dict[str, Any]) -> Reply:
        return self.gate.hold(super().report(body))


async def test_no_model_call_follows_the_final_report() -> None:
    model = ReportHeldForTheArtifact(patience_s=20)
    try:
        with ScriptedLLM(model) as llm:
            run = await run_engine(scripted_settings(llm, clarify=False), QUESTION)
            calls = list(llm.calls)
    finally:
        model.gate.cancel()
    assert not model.gate.gave_up.is_set(), "the artifact's call waited for the final report"
    assert run.stop_reason == "completed"
    (report_call,) = [c for c in calls if c.step == "report"]
    (artifact_call,) = [c for c in calls if c.step == "artifact"]
    assert artifact_call.arrived < report_call.finished
    # nothing is asked once the report's stream has ended: no model latency between its last token and `stop`
    assert [c.step for c in calls if c.arrived >= report_call.finished] == []
    assert _report(run).key_findings  # the model's artifact, not the fallback


class ReportCitesASubset(ResearchModel):
    """A report citing the third source it was given, then the first, and nothing else; an artifact
    whose key findings each name the URL of the source they cite, for every source it was given."""

    def report(self, body: dict[str, Any]) -> Reply:
        numbers = [n for n, _, _ in sources_in(user_text(body).replace(" — ", "\nURL: "))]
        first, third = numbers[0], numbers[2]
        return Reply(text=f"Data descriptors win [{third}].\n\n## Details\n\nThe fallback runs last [{first}].\n")

    def artifact(self, body: dict[str, Any]) -> Reply:
        given = sources_in(user_text(body).replace(" — ", "\nURL: "))
        findings = [{"text": f"The page at {url} explains it.", "citations": [n]} for n, _, url in given]
        arguments = {
            "title": "Descriptors and __getattr__",
            "summary": "Descriptors come first.",
            "key_findings": findings,
        }
        return Reply(tool_calls=[Call("record_artifact", arguments)])


async def test_key_findings_cite_the_reports_own_numbers_after_renumbering() -> None:
    with ScriptedLLM(ReportCitesASubset()) as llm:
        run = await run_engine(scripted_settings(llm, clarify=False), QUESTION)
        (report_request,) = llm.requests_for("report")
        (artifact_request,) = llm.requests_for("artifact")
    check_invariants(run.packets)
    report = _report(run)
    # the artifact was asked with the numbering the report was given, not the report's final one
    given = sources_in(user_text(report_request).replace(" — ", "\nURL: "))
    assert sources_in(user_text(artifact_request).replace(" — ", "\nURL: ")) == given
    assert len(given) > 3
    # the report kept two sources, renumbered [3] -> [1] and [1] -> [2]; each key finding cites the
    # report's number for the source it names, and those the report does not cite are gone
    assert [s.url for s in report.sources] == [given[2][2], given[0][2]]
    assert [f.citations for f in report.key_findings] == [[2], [1]]
    for finding in report.key_findings:
        (number,) = finding.citations
        url = re.search(r"at (\S+) explains", finding.text)
        assert url is not None and report.sources[number - 1].url == url.group(1), finding.text


async def test_a_report_that_says_its_sources_do_not_answer_directly_is_not_rated_high() -> None:
    # The built-in corpus never says how a generator runs clean-up code on close(): the offline model
    # says so where the answer would open, and the confidence must not contradict it.
    run = await run_engine(Settings(clarify=False), "How do I make a generator clean up when close() is called?")
    method = _report(run).method
    assert method is not None
    written = _report(run).markdown.removesuffix(method.text)
    assert "do not answer this question directly" in written
    assert method.opening_cited is False
    assert method.confidence == "medium"
    assert method.confidence_reason.startswith("the report's first paragraph cites no source")
    # nor does a summary or a key finding above it answer what the report says it cannot
    assert _report(run).summary == "" and _report(run).key_findings == []

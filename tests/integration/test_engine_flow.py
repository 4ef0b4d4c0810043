"""The research flow end to end through litellm against a scripted model on 127.0.0.1."""

from __future__ import annotations

import json

from sleuth.llm.tokens import count_tokens
from sleuth.stream.results import ClarificationExchange, ResearchRequest
from sleuth_testkit.engine import run_engine, scripted_settings
from sleuth_testkit.model import Reply, ScriptedLLM, classify
from sleuth_testkit.scenarios import ResearchModel
from support.invariants import check_invariants

QUESTION = "How do Python descriptors and __getattr__ interact during attribute lookup?"


async def test_happy_path_clarify_plan_two_cycles_three_lanes_report() -> None:
    with ScriptedLLM(ResearchModel()) as llm:
        run = await run_engine(scripted_settings(llm), QUESTION)
    check_invariants(run.packets)
    assert run.stop_reason == "completed"
    assert [p.obj.num_parallel_branches for p in run.of("top_level_branching")] == [3, 2]
    assert run.of("plan_done")[0].obj.steps == [
        "How descriptors work",
        "How __getattr__ is used",
        "How they interact in lookup",
    ]
    # the plan streamed in pieces that add up to the model's text
    assert "".join(p.obj.content for p in run.of("plan_delta")).startswith("1. How descriptors work")
    # three lanes of the first cycle ran concurrently: all started before any finished
    first_turn = run.of("top_level_branching")[0].placement.turn_index
    lane_events = [
        p
        for p in run.packets
        if p.placement.turn_index == first_turn and p.obj.type in ("research_agent_start", "section_end")
    ]
    assert [p.obj.type for p in lane_events[:3]] == ["research_agent_start"] * 3
    # each tool call in an agent has its own sub-turn; searches precede opens
    lane0 = [
        p
        for p in run.packets
        if p.placement.turn_index == first_turn
        and p.placement.tab_index == 0
        and p.placement.sub_turn_index is not None
    ]
    kinds_by_sub = {}
    for p in lane0:
        kinds_by_sub.setdefault(p.placement.sub_turn_index, set()).add(p.obj.type)
    assert kinds_by_sub[0] >= {"search_start", "search_queries", "search_documents"}
    assert kinds_by_sub[1] >= {"open_url_start", "open_url_urls", "open_url_documents"}
    assert "intermediate_report_start" in kinds_by_sub[2]
    # think_tool arguments reached clients as plain reasoning text, JSON stripped and unescaped
    reasoning = "".join(p.obj.reasoning for p in run.of("reasoning_delta"))
    assert 'Cycle 1: covering "2" tasks.\nNext: dispatch.' in reasoning
    assert len(run.of("reasoning_done")) == 2
    # the report cites only real corpus documents and everything is accounted for
    report = run.of("report")[0].obj
    assert report.sources and all(s.url.startswith("corpus://python-reference/") for s in report.sources)
    summary = run.of("summary")[0].obj
    assert summary.sources_cited == len(report.sources)
    assert summary.sources_fetched >= 1 and summary.sources_seen >= summary.sources_fetched
    assert summary.input_tokens == sum(p.obj.input_tokens for p in run.of("usage")) > 0
    assert run.result.status == "completed" and run.result.markdown == report.markdown
    progress = run.of("progress")[-1].obj
    assert progress.processed_tasks == progress.total_tasks == 5


async def test_agents_are_isolated_to_their_task() -> None:
    with ScriptedLLM(ResearchModel()) as llm:
        await run_engine(scripted_settings(llm), QUESTION)
        agent_requests = llm.requests_for("agent") + llm.requests_for("agent_report")
    assert agent_requests
    for body in agent_requests:
        text = json.dumps(body["messages"])
        assert QUESTION not in text
        assert "How descriptors work" not in text  # the plan


async def test_clarification_stops_the_run_and_the_answer_resumes_it() -> None:
    model = ResearchModel(clarify_questions="1. Which Python version?\n2. CPython only, or other implementations too?")
    with ScriptedLLM(model) as llm:
        settings = scripted_settings(llm)
        first = await run_engine(settings, "descriptors?")
        check_invariants(first.packets)
        assert first.stop_reason == "clarification"
        assert first.of("clarification")[0].obj.questions == [
            "Which Python version?",
            "CPython only, or other implementations too?",
        ]
        assert "".join(p.obj.content for p in first.of("message_delta")).startswith("1. Which Python version?")
        assert not first.of("plan_start") and first.result.status == "waiting_for_input"

        answer = ResearchRequest(
            question="descriptors?",
            clarification=ClarificationExchange(
                questions=first.result.clarification_questions, answer="3.12, CPython only"
            ),
        )
        second = await run_engine(settings, answer)
        check_invariants(second.packets)
        assert second.stop_reason == "completed"
        clarifier_calls = [b for b in llm.requests if classify(b) == "clarifier"]
        assert len(clarifier_calls) == 1  # skipped on the answer
        planner = llm.requests_for("planner")[-1]
        assert "3.12, CPython only" in json.dumps(planner["messages"])


async def test_clarification_can_be_turned_off_per_request() -> None:
    model = ResearchModel(clarify_questions="1. Which version?")
    with ScriptedLLM(model) as llm:
        run = await run_engine(scripted_settings(llm), ResearchRequest(question="descriptors?", clarify=False))
        assert not llm.requests_for("clarifier")
    assert run.stop_reason == "completed"


async def test_strategy_changes_the_orchestrator_prompt() -> None:
    prompts = {}
    for strategy in ("exploratory", "focused", "balanced"):
        with ScriptedLLM(ResearchModel(tasks_per_cycle=[])) as llm:
            await run_engine(
                scripted_settings(llm), ResearchRequest(question=QUESTION, strategy=strategy, clarify=False)
            )
            prompts[strategy] = llm.requests_for("orchestrator")[0]["messages"][0]["content"]
    assert "Strategy: exploratory" in prompts["exploratory"] and "breadth" in prompts["exploratory"]
    assert "Strategy: focused" in prompts["focused"] and "depth" in prompts["focused"]
    assert len(set(prompts.values())) == 3


async def test_each_role_uses_its_own_model_and_falls_back_to_the_main_one() -> None:
    with ScriptedLLM(ResearchModel()) as llm:
        settings = scripted_settings(
            llm, report_model="openai/report-model", researcher_model="openai/researcher-model"
        )
        run = await run_engine(settings, QUESTION)
        by_step = {classify(b): b["model"] for b in llm.requests}
    assert by_step["report"] == "report-model"
    assert by_step["agent"] == by_step["agent_report"] == "researcher-model"
    assert by_step["orchestrator"] == by_step["planner"] == by_step["clarifier"] == "scripted"
    usage_models = {p.obj.role: p.obj.model for p in run.of("usage")}
    assert usage_models["report"] == "openai/report-model" and usage_models["orchestrator"] == "openai/scripted"


class Verbose(ResearchModel):
    def agent_report(self, body: dict) -> Reply:
        return Reply(
            text=" ".join(f"Long finding number {i} about descriptors [1]." for i in range(400)), chunk_size=200
        )


async def test_intermediate_reports_are_capped_in_tokens() -> None:
    with ScriptedLLM(Verbose(tasks_per_cycle=[["descriptor protocol"]])) as llm:
        run = await run_engine(scripted_settings(llm, intermediate_report_max_tokens=120), QUESTION)
        finding = next(
            m["content"]
            for body in llm.requests_for("orchestrator")
            for m in body["messages"]
            if m["role"] == "tool" and "Long finding" in m["content"]
        )
    check_invariants(run.packets)
    assert 60 < count_tokens(finding) <= 120
    assert finding.rstrip().endswith(".")  # cut at a sentence boundary, not mid-word
    streamed = "".join(p.obj.content for p in run.of("intermediate_report_delta"))
    assert count_tokens(streamed) < 120 + 200  # the stream stops soon after the cap, not after 400 sentences

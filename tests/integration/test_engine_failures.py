"""Failure scenarios: the cap, broken agents, the timeout cascade, bad model output, rate limits."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest

from sleuth_testkit.clock import VirtualClock
from sleuth_testkit.engine import run_engine, scripted_settings
from sleuth_testkit.model import Call, Reply, ScriptedLLM, classify, tool_names
from sleuth_testkit.scenarios import HangingOrchestrator, ResearchModel, assistant_turns
from support.invariants import check_invariants

# virtual-clock tests: litellm loads off the loop, on a thread the clock does not see; loaded before
pytestmark = pytest.mark.usefixtures("warm_litellm")

REASONING_MODEL = "openai/o3-mini"  # litellm's bundled table: supports_reasoning, priced
QUESTION = "How do Python descriptors and __getattr__ interact during attribute lookup?"


def tool_messages(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


async def test_five_agent_calls_in_one_turn_run_three_and_refuse_two() -> None:
    model = ResearchModel(tasks_per_cycle=[[f"task number {i} about descriptors" for i in range(5)]])
    with ScriptedLLM(model) as llm:
        run = await run_engine(scripted_settings(llm), QUESTION)
        second = llm.requests_for("orchestrator")[1]
    check_invariants(run.packets)
    assert run.of("top_level_branching")[0].obj.num_parallel_branches == 3
    assert [p.obj.task for p in run.of("research_agent_start")] == [
        f"task number {i} about descriptors" for i in range(3)
    ]
    answers = tool_messages(second)
    refused = [a for a in answers if a.startswith("Not run")]
    assert len(refused) == 2 and "at most 3" in refused[0]
    assert sum(1 for a in answers if "Finding" in a) == 3


class FailingAgent(ResearchModel):
    """The agent whose task mentions 'broken' gets a non-retryable error from the provider."""

    def agent(self, body: dict[str, Any]) -> Reply:
        if "broken" in body["messages"][1]["content"]:
            return Reply(status=400, error_message="invalid request for this agent")
        return super().agent(body)


async def test_agent_that_raises_ends_its_lane_with_an_error_and_the_run_goes_on() -> None:
    model = FailingAgent(tasks_per_cycle=[["descriptor protocol", "broken task", "__getattr__ fallback"]])
    with ScriptedLLM(model) as llm:
        run = await run_engine(scripted_settings(llm), QUESTION)
        answers = tool_messages(llm.requests_for("orchestrator")[1])
    check_invariants(run.packets)
    assert run.stop_reason == "completed"
    errors = [p for p in run.of("error") if p.placement.tab_index == 1]
    assert errors and "Research agent failed" in errors[0].obj.message and errors[0].obj.recoverable
    assert any("failed and returned nothing" in a for a in answers)
    assert run.of("report")[0].obj.sources  # the other lanes still reported


class HangingAgent(ResearchModel):
    """The 'slow' agent hangs on its research turn; with `hang_report` its report hangs too."""

    def __init__(self, hang_report: bool, **kw: Any) -> None:
        super().__init__(**kw)
        self.hang_report = hang_report

    def agent(self, body: dict[str, Any]) -> Reply:
        if "slow" in body["messages"][1]["content"] and assistant_turns(body) >= 1:
            return Reply(hang=True)
        return super().agent(body)

    def agent_report(self, body: dict[str, Any]) -> Reply:
        if self.hang_report and "slow" in body["messages"][0]["content"]:
            return Reply(hang=True)
        return super().agent_report(body)


@pytest.mark.parametrize("hang_report", [False, True])
async def test_hanging_agent_is_forced_to_report_then_hard_timed_out(hang_report: bool) -> None:
    model = HangingAgent(hang_report, tasks_per_cycle=[["descriptor protocol", "slow attribute lookup task"]])
    async with VirtualClock() as clock, ScriptedLLM(model, pauses=clock) as llm:  # the default 12 min / 30 min cascade
        settings = scripted_settings(
            llm, force_report_s=3600, report_timeout_s=300, agent_force_report_s=720, agent_timeout_s=1800
        )
        run = await run_engine(settings, QUESTION, clock=clock)
        answers = tool_messages(llm.requests_for("orchestrator")[1])
    check_invariants(run.packets)
    assert run.stop_reason == "completed"
    # the timed-out agent was really cancelled: nothing of the run is left running
    assert {t for t in asyncio.all_tasks() if t is not asyncio.current_task()} == set()
    lane1 = [p for p in run.packets if p.placement.tab_index == 1]
    levels = [p.obj.level for p in lane1 if p.obj.type == "degraded"]
    assert levels[0] == "agent_force_report"
    if hang_report:
        assert levels == ["agent_force_report", "agent_hard_timeout"]
        assert any("timed out" in a for a in answers)
        assert lane1[-1].obj.type == "section_end"
    else:
        assert levels == ["agent_force_report"]
        assert any(p.obj.type == "intermediate_report_cited_docs" for p in lane1)
    # Each level fires at its setting after the lanes' start (`Lane.started_at`), read right after
    # `top_level_branching` is emitted; work takes no time on the virtual clock, so to the second.
    started = run.times[next(p.seq for p in run.packets if p.obj.type == "top_level_branching")]
    at = {p.obj.level: run.times[p.seq] - started for p in lane1 if p.obj.type == "degraded"}
    assert at["agent_force_report"] == pytest.approx(720)
    if hang_report:
        assert at["agent_hard_timeout"] == pytest.approx(1800)


async def test_orchestrator_force_report_writes_the_report_from_findings() -> None:
    async with VirtualClock() as clock, ScriptedLLM(HangingOrchestrator(cycles=1), pauses=clock) as llm:
        run = await run_engine(scripted_settings(llm), QUESTION, clock=clock)
    check_invariants(run.packets)
    assert run.stop_reason == "completed"
    assert [p.obj.level for p in run.of("degraded")] == ["orchestrator_force_report"]
    assert run.of("report")[0].obj.sources
    forced = run.of("degraded")[0]
    assert run.times[forced.seq] - run.times[0] == pytest.approx(1800)  # the default, to the second


class EverythingHangs(ResearchModel):
    def orchestrator(self, body: dict[str, Any]) -> Reply:
        if assistant_turns(body) >= 1:
            return Reply(hang=True)
        return super().orchestrator(body)

    def report(self, body: dict[str, Any]) -> Reply:
        return Reply(text="Partial report: descriptors win [1] and ", hang=True)


async def test_report_timeout_cuts_the_report_and_keeps_the_partial_text() -> None:
    async with VirtualClock() as clock, ScriptedLLM(EverythingHangs(), pauses=clock) as llm:
        run = await run_engine(scripted_settings(llm), QUESTION, clock=clock)
    check_invariants(run.packets)
    assert [p.obj.level for p in run.of("degraded")] == ["orchestrator_force_report", "report_timeout"]
    cut = run.of("degraded")[1]
    assert run.times[cut.seq] - run.times[0] == pytest.approx(1800 + 300)  # force report, then its timeout
    assert run.stop_reason == "completed"
    assert run.of("report")[0].obj.markdown.startswith("Partial report: descriptors win [1]")


async def test_global_deadline_ends_the_run_within_a_second() -> None:
    async with VirtualClock() as clock, ScriptedLLM(EverythingHangs(), pauses=clock) as llm:
        # a deadline before the orchestrator's force report: the last line of defence fires
        settings = scripted_settings(llm, deadline_s=1000)
        started = time.monotonic()
        run = await run_engine(settings, QUESTION, clock=clock)
        real_elapsed = time.monotonic() - started
    check_invariants(run.packets)
    assert run.stop_reason == "deadline"
    assert "deadline" in [p.obj.level for p in run.of("degraded")]
    # the stop comes within the second the contract allows after the deadline
    assert 1000 <= run.times[-1] - run.times[0] <= 1000 + 1
    # it did not wait for a hung call to give up (the call timeout is real time, not scaled)
    assert real_elapsed < settings.llm_timeout_s
    assert run.of("report"), "a report is published even at the deadline"


class AgentsStillWorking(ResearchModel):
    """Agents whose second model call never answers: they are mid-research when the deadline comes."""

    def agent(self, body: dict[str, Any]) -> Reply:
        if assistant_turns(body) >= 1:
            return Reply(hang=True)
        return super().agent(body)


async def test_no_agent_outlives_a_run_ended_by_its_deadline() -> None:
    async with VirtualClock() as clock, ScriptedLLM(AgentsStillWorking(), pauses=clock) as llm:
        # the agents' own limits lie beyond the deadline, so only the deadline can stop them
        settings = scripted_settings(llm, deadline_s=1000, agent_force_report_s=5000, agent_timeout_s=6000)
        run = await run_engine(settings, QUESTION, clock=clock)
        alive = [task.get_name() for task in asyncio.all_tasks() if task.get_name().startswith("agent-")]
    assert alive == [], "agents cut off by the deadline must be cancelled before the run ends"
    check_invariants(run.packets)
    assert run.stop_reason == "deadline"
    assert run.of("research_agent_start"), "the agents were running when the deadline came"


class NoToolCall(ResearchModel):
    def __init__(self, on_cycle: int) -> None:
        super().__init__()
        self.on_cycle = on_cycle

    def orchestrator(self, body: dict[str, Any]) -> Reply:
        if assistant_turns(body) == self.on_cycle:
            return Reply(text="I think I know the answer already.")
        return super().orchestrator(body)


async def test_no_tool_call_on_cycle_zero_is_an_error() -> None:
    with ScriptedLLM(NoToolCall(0)) as llm:
        run = await run_engine(scripted_settings(llm), QUESTION)
    check_invariants(run.packets)
    assert run.stop_reason == "error"
    assert not run.of("error")[0].obj.recoverable
    assert not run.of("report") and run.result.status == "error"


async def test_no_tool_call_on_a_later_cycle_goes_straight_to_the_report() -> None:
    with ScriptedLLM(NoToolCall(1)) as llm:
        run = await run_engine(scripted_settings(llm), QUESTION)
        assert len(llm.requests_for("orchestrator")) == 2
    check_invariants(run.packets)
    assert run.stop_reason == "completed" and len(run.of("top_level_branching")) == 1 and run.of("report")


class Hallucinating(ResearchModel):
    def orchestrator(self, body: dict[str, Any]) -> Reply:
        cycle = assistant_turns(body)
        if cycle == 0:
            return Reply(
                tool_calls=[
                    Call("functions.Research-Agent", {"task": "descriptor protocol"}),
                    Call("web_browse", {"url": "https://example.com"}),
                    Call("research_agent", '{"task": "unterminated'),
                    Call("research_agent", {"topic": "missing task field"}),
                ]
            )
        return Reply(tool_calls=[Call("generate_report", {})])


async def test_hallucinated_names_and_invalid_arguments_get_error_responses() -> None:
    with ScriptedLLM(Hallucinating()) as llm:
        run = await run_engine(scripted_settings(llm), QUESTION)
        second = llm.requests_for("orchestrator")[1]
    check_invariants(run.packets)
    assert run.stop_reason == "completed"
    assert [p.obj.task for p in run.of("research_agent_start")] == ["descriptor protocol"]
    answers = tool_messages(second)
    assert "Finding" in answers[0]  # the mangled name was mapped to research_agent and ran
    assert answers[1].startswith("Unknown tool 'web_browse'")
    assert "not valid JSON" in answers[2]
    assert "missing required argument(s): task" in answers[3]
    # the repaired call goes back to the model under its real name
    sent = [
        c["function"]["name"] for m in second["messages"] if m["role"] == "assistant" for c in m.get("tool_calls", [])
    ]
    assert sent[0] == "research_agent"


class Fabricating(ResearchModel):
    """Every agent cites its own [1],[2] (and a [9] it was never shown); the report invents more."""

    def agent_report(self, body: dict[str, Any]) -> Reply:
        return Reply(text="First fact [1]. Second fact [2]. Invented fact [9].")

    def report(self, body: dict[str, Any]) -> Reply:
        return Reply(
            text=(
                "Summary [1][2]. More [3][4] and [5]. Invented [42]. "
                "See [this page](https://fabricated.example.com/page) and https://bit.ly/x1 for more."
            )
        )


async def test_three_agents_citing_one_two_get_one_global_numbering_and_fabrications_are_removed() -> None:
    model = Fabricating(
        tasks_per_cycle=[["descriptor protocol __get__", "__getattr__ fallback", "descriptor protocol __get__"]]
    )
    with ScriptedLLM(model) as llm:
        run = await run_engine(scripted_settings(llm), QUESTION)
        report_request = llm.requests_for("report")[0]
    check_invariants(run.packets)
    cited = sorted(run.of("intermediate_report_cited_docs"), key=lambda p: p.placement.tab_index)
    assert [len(p.obj.documents) for p in cited] == [2, 2, 2]  # [9] was never shown to the agent
    # lanes 0 and 2 had the same task, so the same two documents: they share global numbers
    user = report_request["messages"][1]["content"]
    assert "Invented fact" in user and "[9]" not in user
    numbered = sorted({int(n) for n in __import__("re").findall(r"^\[(\d+)\]", user, __import__("re").M)})
    ids_lane0 = [d.id for d in cited[0].obj.documents]
    ids_lane2 = [d.id for d in cited[2].obj.documents]
    assert ids_lane0 == ids_lane2
    assert numbered == list(range(1, len({d.id for p in cited for d in p.obj.documents}) + 1))
    report = run.of("report")[0].obj
    removed = {r.marker: r.reason for r in report.removed_citations}
    assert "[42]" in removed and "https://fabricated.example.com/page" in removed
    assert "https://bit.ly/x1" in removed and "shortener" in removed["https://bit.ly/x1"]
    assert "fabricated.example.com" not in report.markdown and "[42]" not in report.markdown
    assert [s.number for s in report.sources] == list(range(1, len(report.sources) + 1))


async def test_reasoning_model_gets_no_think_tool_and_four_cycles() -> None:
    # A reasoning model from litellm's bundled table, served by the scripted server: litellm's own
    # table is read, never changed, so no other test sees a different model table.
    endless = ResearchModel(tasks_per_cycle=[["descriptor protocol"]] * 20)
    with ScriptedLLM(endless) as llm:
        run = await run_engine(scripted_settings(llm, model=REASONING_MODEL), QUESTION)
        orchestrator_calls = llm.requests_for("orchestrator")
        agent_calls = llm.requests_for("agent")
    check_invariants(run.packets)
    assert len(orchestrator_calls) == 4
    assert all("think_tool" not in tool_names(b) for b in orchestrator_calls + agent_calls)
    assert run.of("summary")[0].obj.cost_usd > 0  # priced from litellm's table


async def test_a_burst_of_429s_and_a_500_is_ridden_out() -> None:
    failures = {"left": 4}
    model = ResearchModel()

    def flaky(body: dict[str, Any]) -> Reply:
        if failures["left"] > 0:
            failures["left"] -= 1
            return Reply(status=429 if failures["left"] else 500, error_message="slow down")
        return model(body)

    with ScriptedLLM(flaky) as llm:
        run = await run_engine(scripted_settings(llm, llm_retries=5), QUESTION)
        assert (
            classify(llm.requests[0]) == "clarifier"
            and len([b for b in llm.requests[:5] if classify(b) == "clarifier"]) == 5
        )
    check_invariants(run.packets)
    assert run.stop_reason == "completed"


async def test_retries_are_bounded() -> None:
    with ScriptedLLM(
        lambda body: Reply(status=503, error_message="overloaded; your key sk-test-secret was fine")
    ) as llm:
        run = await run_engine(scripted_settings(llm, llm_retries=2), QUESTION)
        assert len(llm.requests) == 3  # one try and two retries, then the run ends
    check_invariants(run.packets)
    assert run.stop_reason == "error"
    errors = [p.obj.message for p in run.of("error")]
    assert any("overloaded" in e for e in errors), errors  # the provider's reason is shown ...
    assert "sk-test-secret" not in json.dumps([p.model_dump() for p in run.packets])  # ... without the key


async def test_a_failing_search_provider_gives_an_error_packet_and_the_run_continues() -> None:
    with ScriptedLLM(ResearchModel()) as llm:
        # tavily without a key fails every search; the local corpus still answers
        run = await run_engine(scripted_settings(llm, search="local,tavily"), QUESTION)
        first_agent_results = [t for b in llm.requests_for("agent") for t in tool_messages(b)][:1]
    check_invariants(run.packets)
    assert run.stop_reason == "completed"
    assert run.of("search_start")[0].obj.provider == "local,tavily"
    errors = [p for p in run.of("error") if "tavily" in p.obj.message]
    assert errors and all(p.obj.recoverable and p.placement.sub_turn_index is not None for p in errors)
    assert "SLEUTH_TAVILY_API_KEY" in errors[0].obj.message
    assert "Search error: tavily" in first_agent_results[0]  # the agent is told too
    assert run.of("report")[0].obj.sources

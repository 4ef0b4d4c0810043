"""Time budgets through the real engine and the scripted model, on the virtual clock: the budget
is spent only by what hangs, so a budget of any length passes in no real time, and a loaded machine
that serves a canned reply slowly does not eat it.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from sleuth.stream.results import ResearchRequest
from sleuth_testkit.clock import VirtualClock
from sleuth_testkit.engine import Run, run_engine, scripted_settings
from sleuth_testkit.model import Reply, ScriptedLLM
from sleuth_testkit.scenarios import ResearchModel, assistant_turns
from support.invariants import check_invariants

QUESTION = "How do Python descriptors and __getattr__ interact during attribute lookup?"


class OneLaneHangs(ResearchModel):
    """Agents search and read; the agent whose task says 'stuck' hangs after its search, and so does its report."""

    def agent(self, body: dict[str, Any]) -> Reply:
        if "stuck" in body["messages"][1]["content"] and assistant_turns(body) >= 1:
            return Reply(hang=True)
        return super().agent(body)

    def agent_report(self, body: dict[str, Any]) -> Reply:
        if "stuck" in body["messages"][0]["content"]:
            return Reply(hang=True)
        return super().agent_report(body)


pytestmark = pytest.mark.usefixtures("warm_litellm")


def lane(run: Run, tab: int) -> list[Any]:
    return [p for p in run.packets if p.placement.tab_index == tab and p.placement.turn_index > 0]


@pytest.mark.parametrize("budget", [15.0, 60.0, 120.0, 1800.0])
async def test_a_budget_researches_force_reports_a_hung_agent_and_ends_in_time(budget: float) -> None:
    model = OneLaneHangs(tasks_per_cycle=[["descriptor protocol __get__", "stuck attribute lookup task"]])
    async with VirtualClock() as clock, ScriptedLLM(model, pauses=clock) as llm:
        request = ResearchRequest(question=QUESTION, time_budget_s=budget, clarify=False)
        run = await run_engine(scripted_settings(llm), request, clock=clock)
    check_invariants(run.packets)
    assert run.of("run_start")[0].obj.time_budget_s == budget
    assert run.stop_reason == "completed" and run.of("report")
    # the healthy agent searched and read
    healthy = {p.obj.type for p in lane(run, 0)}
    assert {"search_start", "open_url_start", "intermediate_report_cited_docs"} <= healthy
    # the hung agent searched, was force-reported, then cancelled when its report hung too
    stuck = lane(run, 1)
    assert "search_start" in {p.obj.type for p in stuck}
    assert [p.obj.level for p in stuck if p.obj.type == "degraded"] == ["agent_force_report", "agent_hard_timeout"]
    assert {t for t in asyncio.all_tasks() if t is not asyncio.current_task()} == set()
    # the run ends by its deadline (plus the one second the contract allows)
    assert run.times[-1] - run.times[0] <= budget + 1
    left = [p.obj.time_left_s for p in run.of("progress")]
    assert left and all(0 <= a <= budget for a in left) and left == sorted(left, reverse=True)


@pytest.mark.parametrize("force_report_s", [15.0, 62.0])
async def test_a_short_explicit_force_report_still_researches(force_report_s: float) -> None:
    async with VirtualClock() as clock, ScriptedLLM(ResearchModel(), pauses=clock) as llm:
        settings = scripted_settings(llm, force_report_s=force_report_s)
        run = await run_engine(settings, ResearchRequest(question=QUESTION, clarify=False), clock=clock)
    check_invariants(run.packets)
    assert run.stop_reason == "completed"
    assert run.of("search_start") and run.of("open_url_start")
    # every agent had its first research turn (its search)
    lanes = {(p.placement.turn_index, p.placement.tab_index) for p in run.of("research_agent_start")}
    assert lanes and lanes == {(p.placement.turn_index, p.placement.tab_index) for p in run.of("search_start")}


async def test_no_agents_are_dispatched_that_could_not_report_in_time() -> None:
    async with VirtualClock() as clock, ScriptedLLM(ResearchModel(), pauses=clock) as llm:
        # a grace longer than the research window (51.2 s of a 60 s budget): no agent dispatched at
        # any moment could report in time, however fast the plan was written
        settings = scripted_settings(llm, agent_report_grace_s=55)
        request = ResearchRequest(question=QUESTION, time_budget_s=60, clarify=False)
        run = await run_engine(settings, request, clock=clock)
        orchestrator_calls = len(llm.requests_for("orchestrator"))
    check_invariants(run.packets)
    assert not run.of("research_agent_start") and not run.of("top_level_branching")
    assert orchestrator_calls == 1
    forced = [p.obj for p in run.of("degraded")]
    assert [d.level for d in forced] == ["orchestrator_force_report"] and "Too little time" in forced[0].detail
    assert run.stop_reason == "completed" and run.of("report")


async def test_the_mode_default_budget_is_used_when_the_request_has_none() -> None:
    with ScriptedLLM(ResearchModel()) as llm:
        settings = scripted_settings(llm, light_time_budget_s=300, heavy_time_budget_s=900)
        light = await run_engine(settings, ResearchRequest(question=QUESTION, mode="light", clarify=False))
        heavy = await run_engine(settings, ResearchRequest(question=QUESTION, mode="heavy", clarify=False))
    assert light.of("run_start")[0].obj.time_budget_s == 300
    assert heavy.of("run_start")[0].obj.time_budget_s == 900
